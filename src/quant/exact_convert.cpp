#include "quant/exact_convert.hpp"

#include <cstring>

#include "base/error.hpp"
#include "tensor/fp16.hpp"

namespace minnow::quant {
namespace {

// The codes of a 32-value block whose 4-bit codes are packed two to a byte (value j in the
// low nibble of byte j, value j + 16 in the high nibble), as Q4_0 and Q4_1 store them.
void nibbles(const uint8_t* qs, int code[32]) {
  for (int j = 0; j < 16; ++j) {
    code[j] = qs[j] & 0xf;
    code[j + 16] = qs[j] >> 4;
  }
}

// Q5_0/Q5_1's codes: low nibbles as Q4_0's, fifth bits in a little-endian 32-bit word.
void put_five_bit(const int code[32], uint8_t* qh, uint8_t* qs) {
  uint32_t high = 0;
  for (int j = 0; j < 16; ++j) {
    qs[j] = static_cast<uint8_t>((code[j] & 0xf) | ((code[j + 16] & 0xf) << 4));
    high |= static_cast<uint32_t>(code[j] >> 4) << j;
    high |= static_cast<uint32_t>(code[j + 16] >> 4) << (j + 16);
  }
  for (int b = 0; b < 4; ++b) qh[b] = static_cast<uint8_t>(high >> (8 * b));
}

void five_bit_codes(const uint8_t* qh, const uint8_t* qs, int code[32]) {
  uint32_t high = 0;
  for (int b = 0; b < 4; ++b) high |= static_cast<uint32_t>(qh[b]) << (8 * b);
  for (int j = 0; j < 16; ++j) {
    code[j] = (qs[j] & 0xf) | static_cast<int>(((high >> j) & 1) << 4);
    code[j + 16] = (qs[j] >> 4) | static_cast<int>(((high >> (j + 16)) & 1) << 4);
  }
}

}  // namespace

bool converts_exactly(DType from, DType to) {
  if (from == to) return true;
  switch (from) {
    case DType::Q4_0: return to == DType::Q5_0 || to == DType::Q8_0 || to == DType::Q4_1 || to == DType::Q5_1;
    case DType::Q5_0: return to == DType::Q8_0 || to == DType::Q5_1;
    case DType::Q4_1: return to == DType::Q5_1;
    case DType::Q4_K: return to == DType::Q5_K;
    default: return false;
  }
}

bool convert_exactly(DType from, DType to, const uint8_t* src, uint8_t* dst, int64_t n_blocks) {
  const DTypeTraits &in = dtype_traits(from), &out = dtype_traits(to);
  if (from == to) {
    std::memcpy(dst, src, static_cast<size_t>(n_blocks * in.block_bytes));
    return true;
  }
  for (int64_t b = 0; b < n_blocks; ++b, src += in.block_bytes, dst += out.block_bytes) {
    int code[32];
    switch (from) {
      case DType::Q4_0:
        nibbles(src + 2, code);
        break;
      case DType::Q5_0:
        five_bit_codes(src + 2, src + 6, code);
        break;
      case DType::Q4_1:
        nibbles(src + 4, code);
        break;
      case DType::Q4_K:  // same scales and nibbles; the fifth bits stay 0
        std::memcpy(dst, src, 16);                 // d, dmin, 12 scale bytes
        std::memset(dst + 16, 0, 32);              // qh
        std::memcpy(dst + 48, src + 16, 128);      // qs
        continue;
      default:
        throw Error("quantize: no exact conversion from " + std::string(in.name) + " to " + out.name);
    }
    // The value is d * (code - offset) (+ m for the _1 types): keep d (and m), shift the codes.
    const int in_offset = from == DType::Q4_0 ? 8 : from == DType::Q5_0 ? 16 : 0;
    // d * (code - offset) as d * code + m: m = -offset * d, exact in f16 unless it overflows.
    const auto minimum = [&](uint8_t* m) {
      uint16_t d;
      std::memcpy(&d, src, 2);
      const float want = -static_cast<float>(in_offset) * fp16_to_fp32(d);
      const uint16_t h = in_offset ? fp32_to_fp16(want) : uint16_t{0};
      std::memcpy(m, &h, 2);
      return fp16_to_fp32(h) == want;
    };
    switch (to) {
      case DType::Q5_0:
        std::memcpy(dst, src, 2);
        for (int& c : code) c += 16 - in_offset;
        put_five_bit(code, dst + 2, dst + 6);
        break;
      case DType::Q4_1:  // from Q4_0
        std::memcpy(dst, src, 2);
        if (!minimum(dst + 2)) return false;
        std::memcpy(dst + 4, src + 2, 16);
        break;
      case DType::Q5_1:
        std::memcpy(dst, src, 2);
        if (in_offset != 0 && !minimum(dst + 2)) return false;
        if (in_offset == 0) std::memcpy(dst + 2, src + 2, 2);
        put_five_bit(code, dst + 4, dst + 8);
        break;
      case DType::Q8_0:
        std::memcpy(dst, src, 2);
        for (int j = 0; j < 32; ++j) dst[2 + j] = static_cast<uint8_t>(static_cast<int8_t>(code[j] - in_offset));
        break;
      default:
        throw Error("quantize: no exact conversion from " + std::string(in.name) + " to " + out.name);
    }
  }
  return true;
}

}  // namespace minnow::quant
