// Packing and unpacking of the 8-row interleaved layout (see packed.hpp).
#include "kernels/packed.hpp"

#include <cstring>

#include "base/error.hpp"
#include "tensor/fp16.hpp"

namespace minnow::kernels {
namespace {

// Where one source block keeps its parts (0: absent), and what the packed one holds.
struct Layout {
  size_t src_bytes, src_min, src_qh, src_qs;
  size_t quant_bytes;  // per group-block: 128 (nibbles) or 256 (bytes)
  float offset;        // formats without a minimum: x = (q + offset) * d
};

const Layout& layout(DType t) {
  static const Layout q4_0{18, 0, 0, 2, 128, -8}, q4_1{20, 2, 0, 4, 128, 0}, q5_0{22, 0, 2, 6, 128, -16},
      q5_1{24, 2, 4, 8, 128, 0}, q8_0{34, 0, 0, 2, 256, 0};
  switch (t) {
    case DType::Q4_0: return q4_0;
    case DType::Q4_1: return q4_1;
    case DType::Q5_0: return q5_0;
    case DType::Q5_1: return q5_1;
    case DType::Q8_0: return q8_0;
    default: throw Error("pack: type " + std::string(dtype_name(t)) + " has no packed layout");
  }
}

// Offsets within a packed group-block: scales, minimums, fifth bits, quants.
size_t min_at(const Layout&) { return 16; }
size_t high_at(const Layout& l) { return l.src_min ? 32 : 16; }
size_t quants_at(const Layout& l) { return high_at(l) + (l.src_qh ? 32 : 0); }

float half_at(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return fp16_to_fp32(h);
}

}  // namespace

bool packable(DType t) {
  return t == DType::Q4_0 || t == DType::Q4_1 || t == DType::Q5_0 || t == DType::Q5_1 || t == DType::Q8_0;
}

size_t packed_group_block_bytes(DType t) {
  const Layout& l = layout(t);
  return quants_at(l) + l.quant_bytes;
}

size_t packed_bytes(DType t, int64_t rows, int64_t cols) {
  const int64_t groups = (rows + kPackRows - 1) / kPackRows;
  return static_cast<size_t>(groups) * static_cast<size_t>(cols / 32) * packed_group_block_bytes(t);
}

void pack_rows(const WeightView& w, uint8_t* dst) {
  const Layout& l = layout(w.type);
  const size_t bytes = packed_group_block_bytes(w.type), qs = quants_at(l);
  const int64_t nb = w.cols / 32;
  for (int64_t g = 0; g * kPackRows < w.rows; ++g)
    for (int64_t b = 0; b < nb; ++b, dst += bytes) {
      std::memset(dst, 0, bytes);  // padding rows: zero scale, zero quants
      for (int64_t r = 0; r < kPackRows && g * kPackRows + r < w.rows; ++r) {
        const uint8_t* blk = w.data + (g * kPackRows + r) * w.row_bytes + b * l.src_bytes;
        std::memcpy(dst + 2 * r, blk, 2);
        if (l.src_min) std::memcpy(dst + min_at(l) + 2 * r, blk + l.src_min, 2);
        // Chunk i, lane r: the row's quant bytes 4i..4i+3 (Q4/Q5: elements 4i+e and
        // 16+4i+e share a byte already; Q8_0: elements 4i+e).
        for (size_t i = 0; i < l.quant_bytes / 32; ++i) std::memcpy(dst + qs + 32 * i + 4 * r, blk + l.src_qs + 4 * i, 4);
        if (!l.src_qh) continue;
        // Fifth bits: byte (r/4)*16 + (r%4)*4 + i holds those of elements 4i+e (bit e) and
        // 16+4i+e (bit 4+e), so one in-lane byte shuffle spreads chunk i's over its lanes.
        uint32_t qh;
        std::memcpy(&qh, blk + l.src_qh, 4);
        for (int i = 0; i < 4; ++i) {
          uint8_t v = 0;
          for (int e = 0; e < 4; ++e)
            v |= static_cast<uint8_t>(((qh >> (4 * i + e)) & 1) << e | ((qh >> (16 + 4 * i + e)) & 1) << (4 + e));
          dst[high_at(l) + (r / 4) * 16 + (r % 4) * 4 + i] = v;
        }
      }
    }
}

void dequantize_packed(const WeightView& w, int64_t r0, int64_t n, float* out) {
  const Layout& l = layout(w.type);
  const size_t gbytes = packed_group_block_bytes(w.type);
  const int64_t nb = w.cols / 32;
  for (int64_t r = 0; r < n; ++r) {
    const int64_t row = r0 + r, lane = row % kPackRows;
    const uint8_t* gb = w.packed + static_cast<size_t>(row / kPackRows) * nb * gbytes;
    float* o = out + r * w.cols;
    for (int64_t b = 0; b < nb; ++b, gb += gbytes, o += 32) {
      const float d = half_at(gb + 2 * lane);
      const uint8_t* q = gb + quants_at(l) + 4 * lane;
      if (w.type == DType::Q8_0) {
        for (int j = 0; j < 32; ++j) o[j] = static_cast<float>(static_cast<int8_t>(q[32 * (j / 4) + j % 4])) * d;
        continue;
      }
      const float m = l.src_min ? half_at(gb + min_at(l) + 2 * lane) : 0.0f;
      const uint8_t* high = gb + high_at(l) + (lane / 4) * 16 + (lane % 4) * 4;
      for (int j = 0; j < 16; ++j) {
        const uint8_t byte = q[32 * (j / 4) + j % 4];
        int lo = byte & 0xf, hi = byte >> 4;
        if (l.src_qh) {
          lo |= ((high[j / 4] >> (j % 4)) & 1) << 4;
          hi |= ((high[j / 4] >> (4 + j % 4)) & 1) << 4;
        }
        // The file formats' own expressions (tensor/dtype.cpp), for identical values.
        if (l.src_min) {
          o[j] = static_cast<float>(lo) * d + m;
          o[j + 16] = static_cast<float>(hi) * d + m;
        } else {
          o[j] = (static_cast<float>(lo) + l.offset) * d;
          o[j + 16] = (static_cast<float>(hi) + l.offset) * d;
        }
      }
    }
  }
}

}  // namespace minnow::kernels
