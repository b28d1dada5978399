#include "quant/quantize.hpp"

#include <cmath>
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "quant/block_quantizers.hpp"
#include "quant/scale_search.hpp"
#include "tensor/fp16.hpp"

namespace minnow {
namespace {

// Round to nearest even, NaN kept quiet (inputs are finite here anyway).
uint16_t fp32_to_bf16(float f) {
  const uint32_t u = fp32_to_bits(f);
  return static_cast<uint16_t>((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}

}  // namespace

namespace quant {

const BlockCodec* block_codec(DType t) {
  static const BlockCodec q4_0{quantize_q4_0, set_codes_q4_0, 0, 15}, q4_1{quantize_q4_1, set_codes_q4_1, 0, 15},
      q5_0{quantize_q5_0, set_codes_q5_0, 0, 31}, q5_1{quantize_q5_1, set_codes_q5_1, 0, 31},
      q8_0{quantize_q8_0, set_codes_q8_0, -128, 127}, q4_k{quantize_q4_k, set_codes_q4_k, 0, 15},
      q5_k{quantize_q5_k, set_codes_q5_k, 0, 31}, q6_k{quantize_q6_k, set_codes_q6_k, 0, 63};
  switch (t) {
    case DType::Q4_0: return &q4_0;
    case DType::Q4_1: return &q4_1;
    case DType::Q5_0: return &q5_0;
    case DType::Q5_1: return &q5_1;
    case DType::Q8_0: return &q8_0;
    case DType::Q4_K: return &q4_k;
    case DType::Q5_K: return &q5_k;
    case DType::Q6_K: return &q6_k;
    default: return nullptr;
  }
}

}  // namespace quant

bool can_quantize(DType t) {
  return t == DType::F32 || t == DType::F16 || t == DType::BF16 || quant::block_codec(t) != nullptr;
}

namespace {

// Refuses a type minnow cannot write, a row that is not whole blocks and a non-finite value;
// returns the largest magnitude (for the message when a scale overflows).
float check_row(DType t, const float* x, int64_t n) {
  const DTypeTraits& tr = dtype_traits(t);
  if (!can_quantize(t)) throw Error(std::string("quantize: cannot write type ") + tr.name);
  if (n % tr.block_size != 0)
    throw Error("quantize: a row of " + std::to_string(n) + " values is not a whole number of " + tr.name + " blocks (" +
                std::to_string(tr.block_size) + ")");
  float amax = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(x[i]))
      throw Error("quantize: value " + std::to_string(i) + " of the row is " + (std::isnan(x[i]) ? "NaN" : "infinite"));
    const float a = std::fabs(x[i]);
    amax = a > amax ? a : amax;
  }
  return amax;
}

// Scales are f16: values beyond what they can reach dequantize to inf or NaN. Such a
// tensor is better refused than written broken.
void check_representable(DType t, const uint8_t* out, int64_t n, float amax) {
  const DTypeTraits& tr = dtype_traits(t);
  thread_local std::vector<float> back;
  back.resize(static_cast<size_t>(n));
  tr.dequantize(out, back.data(), n / tr.block_size);
  for (int64_t i = 0; i < n; ++i)
    if (!std::isfinite(back[i]))
      throw Error("quantize: values up to " + std::to_string(amax) + " are beyond the range of " + tr.name +
                  "'s f16 scales (use F32 for this tensor)");
}

}  // namespace

void quantize_row(DType t, const float* x, int64_t n, void* dst, const float* importance) {
  const float amax = check_row(t, x, n);
  auto* out = static_cast<uint8_t*>(dst);
  switch (t) {
    case DType::F32: std::memcpy(out, x, static_cast<size_t>(n) * 4); return;
    case DType::F16:
      for (int64_t i = 0; i < n; ++i) {
        if (std::fabs(x[i]) >= 65520.0f) throw Error("quantize: value " + std::to_string(x[i]) + " overflows F16");
        const uint16_t h = fp32_to_fp16(x[i]);
        std::memcpy(out + 2 * i, &h, 2);
      }
      return;
    case DType::BF16:
      for (int64_t i = 0; i < n; ++i) {
        const uint16_t h = fp32_to_bf16(x[i]);
        std::memcpy(out + 2 * i, &h, 2);
      }
      return;
    default: break;
  }
  const DTypeTraits& tr = dtype_traits(t);
  quant::block_codec(t)->quantize(x, out, n / tr.block_size, importance);
  check_representable(t, out, n, amax);
}

void quantize_row_gptq(DType t, float* x, int64_t n, void* dst, const float* importance, const float* u) {
  const quant::BlockCodec* codec = quant::block_codec(t);
  if (!codec) return quantize_row(t, x, n, dst, importance);
  const float amax = check_row(t, x, n);
  const DTypeTraits& tr = dtype_traits(t);
  const int B = static_cast<int>(tr.block_size);
  const auto bytes = static_cast<size_t>(tr.block_bytes);
  auto* out = static_cast<uint8_t*>(dst);
  std::vector<int> codes(static_cast<size_t>(B));
  std::vector<float> lo(static_cast<size_t>(B)), hi(static_cast<size_t>(B));
  std::vector<uint8_t> probe(bytes);
  for (int64_t b0 = 0; b0 < n; b0 += B) {
    uint8_t* block = out + static_cast<size_t>(b0 / B) * bytes;
    // The block's scales are chosen from its values as the earlier columns' errors left them.
    codec->quantize(x + b0, block, 1, importance ? importance + b0 : nullptr);
    // Value j of the block is step_j * code + base_j: read off by dequantizing codes 0 and 1.
    std::memcpy(probe.data(), block, bytes);
    std::fill(codes.begin(), codes.end(), 0);
    codec->set_codes(probe.data(), codes.data());
    tr.dequantize(probe.data(), lo.data(), 1);
    std::fill(codes.begin(), codes.end(), 1);
    codec->set_codes(probe.data(), codes.data());
    tr.dequantize(probe.data(), hi.data(), 1);
    for (int j = 0; j < B; ++j) {
      const int64_t col = b0 + j;
      const float step = hi[j] - lo[j], base = lo[j];
      int c = codec->code_min < 0 ? 0 : codec->code_min;
      if (step != 0) c = quant::round_clamp((x[col] - base) / step, codec->code_min, codec->code_max);
      codes[static_cast<size_t>(j)] = c;
      // The error, scaled by the factor's diagonal, moves onto every later column.
      const float* urow = u + col * n;
      const float e = (x[col] - (base + step * static_cast<float>(c))) / urow[col];
      for (int64_t k = col + 1; k < n; ++k) x[k] -= e * urow[k];
    }
    codec->set_codes(block, codes.data());
  }
  check_representable(t, out, n, amax);
}

}  // namespace minnow
