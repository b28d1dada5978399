// Packing and unpacking of the 8-row interleaved layout (see packed.hpp).
#include "kernels/packed.hpp"

#include <cstring>

#include "base/error.hpp"
#include "tensor/fp16.hpp"

namespace minnow::kernels {
namespace {

// Where one source block keeps its parts: the f16 scale, the f16 minimum, the quants.
struct SourceBlock {
  size_t bytes, min_at, qs_at;
};

SourceBlock source_block(DType t) {
  switch (t) {
    case DType::Q4_0: return {18, 0, 2};
    case DType::Q4_1: return {20, 2, 4};
    case DType::Q8_0: return {34, 0, 2};
    default: throw Error("pack: type " + std::string(dtype_name(t)) + " has no packed layout");
  }
}

size_t head_bytes(DType t) { return t == DType::Q4_1 ? 32 : 16; }

}  // namespace

bool packable(DType t) { return t == DType::Q4_0 || t == DType::Q4_1 || t == DType::Q8_0; }

size_t packed_group_block_bytes(DType t) { return head_bytes(t) + (t == DType::Q8_0 ? 256 : 128); }

size_t packed_bytes(DType t, int64_t rows, int64_t cols) {
  const int64_t groups = (rows + kPackRows - 1) / kPackRows;
  return static_cast<size_t>(groups) * static_cast<size_t>(cols / 32) * packed_group_block_bytes(t);
}

void pack_rows(const WeightView& w, uint8_t* dst) {
  const SourceBlock src = source_block(w.type);
  const size_t head = head_bytes(w.type), qs_bytes = packed_group_block_bytes(w.type) - head;
  const int64_t nb = w.cols / 32;
  for (int64_t g = 0; g * kPackRows < w.rows; ++g)
    for (int64_t b = 0; b < nb; ++b, dst += head + qs_bytes) {
      std::memset(dst, 0, head + qs_bytes);  // padding rows: zero scale, zero quants
      for (int64_t r = 0; r < kPackRows && g * kPackRows + r < w.rows; ++r) {
        const uint8_t* blk = w.data + (g * kPackRows + r) * w.row_bytes + b * src.bytes;
        std::memcpy(dst + 2 * r, blk, 2);
        if (w.type == DType::Q4_1) std::memcpy(dst + 16 + 2 * r, blk + src.min_at, 2);
        // Chunk i, lane r: the row's quant bytes 4i..4i+3 (Q4: elements 4i+e and 16+4i+e
        // share a byte already; Q8_0: elements 4i+e).
        for (size_t i = 0; i < qs_bytes / 32; ++i) std::memcpy(dst + head + 32 * i + 4 * r, blk + src.qs_at + 4 * i, 4);
      }
    }
}

void dequantize_packed(const WeightView& w, int64_t r0, int64_t n, float* out) {
  const size_t gbytes = packed_group_block_bytes(w.type), head = head_bytes(w.type);
  const int64_t nb = w.cols / 32;
  for (int64_t r = 0; r < n; ++r) {
    const int64_t row = r0 + r, lane = row % kPackRows;
    const uint8_t* gb = w.packed + static_cast<size_t>(row / kPackRows) * nb * gbytes;
    float* o = out + r * w.cols;
    for (int64_t b = 0; b < nb; ++b, gb += gbytes, o += 32) {
      uint16_t h;
      std::memcpy(&h, gb + 2 * lane, 2);
      const float d = fp16_to_fp32(h);
      const uint8_t* q = gb + head + 4 * lane;
      if (w.type == DType::Q8_0) {
        for (int j = 0; j < 32; ++j) o[j] = d * static_cast<float>(static_cast<int8_t>(q[32 * (j / 4) + j % 4]));
        continue;
      }
      float m = -8.0f * d;  // Q4_0: (q - 8) * d
      if (w.type == DType::Q4_1) {
        std::memcpy(&h, gb + 16 + 2 * lane, 2);
        m = fp16_to_fp32(h);
      }
      for (int j = 0; j < 16; ++j) {
        const uint8_t byte = q[32 * (j / 4) + j % 4];
        if (w.type == DType::Q4_1) {
          o[j] = d * static_cast<float>(byte & 0xf) + m;
          o[j + 16] = d * static_cast<float>(byte >> 4) + m;
        } else {
          o[j] = static_cast<float>((byte & 0xf) - 8) * d;
          o[j + 16] = static_cast<float>((byte >> 4) - 8) * d;
        }
      }
    }
  }
}

}  // namespace minnow::kernels
