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

// K-quants (see packed.hpp): a group-superblock's header, then 8 sub-blocks of bit planes
// and nibbles.
bool is_k(DType t) { return t == DType::Q4_K || t == DType::Q5_K || t == DType::Q6_K; }

struct KLayout {
  size_t header;  // d, dmin and scales
  int planes;     // bits above the nibble: 0 (Q4_K), 1 (Q5_K), 2 (Q6_K)
  size_t sub_bytes() const { return 32 * static_cast<size_t>(planes) + 128; }
  size_t super_bytes() const { return header + 8 * sub_bytes(); }
};

KLayout k_layout(DType t) {
  switch (t) {
    case DType::Q4_K: return {160, 0};
    case DType::Q5_K: return {160, 1};
    default: return {144, 2};
  }
}

// One row's super-block in plain numbers: q (0..63) per element, the f16 scales as stored,
// and per sub-block (Q4_K/Q5_K) or per 16 columns (Q6_K) the small scales.
struct KRow {
  uint16_t d = 0, dmin = 0;
  uint8_t sc[16] = {}, mn[8] = {};
  uint8_t q[256];
};

KRow read_k(DType t, const uint8_t* b) {
  KRow k;
  if (t == DType::Q6_K) {
    std::memcpy(&k.d, b + 208, 2);
    std::memcpy(k.sc, b + 192, 16);
    for (int h = 0; h < 2; ++h) {
      const uint8_t *ql = b + 64 * h, *qh = b + 128 + 32 * h;
      uint8_t* q = k.q + 128 * h;
      for (int l = 0; l < 32; ++l) {
        q[l] = static_cast<uint8_t>((ql[l] & 0xf) | ((qh[l] >> 0) & 3) << 4);
        q[l + 32] = static_cast<uint8_t>((ql[l + 32] & 0xf) | ((qh[l] >> 2) & 3) << 4);
        q[l + 64] = static_cast<uint8_t>((ql[l] >> 4) | ((qh[l] >> 4) & 3) << 4);
        q[l + 96] = static_cast<uint8_t>((ql[l + 32] >> 4) | ((qh[l] >> 6) & 3) << 4);
      }
    }
    return k;
  }
  const bool q5 = t == DType::Q5_K;
  std::memcpy(&k.d, b, 2);
  std::memcpy(&k.dmin, b + 2, 2);
  for (int j = 0; j < 8; ++j) k_scale_min(j, b + 4, &k.sc[j], &k.mn[j]);
  const uint8_t *qh = b + 16, *qs = b + (q5 ? 48 : 16);
  for (int p = 0; p < 4; ++p)  // 32 bytes hold sub-blocks 2p (low nibbles) and 2p+1 (high)
    for (int l = 0; l < 32; ++l) {
      const uint8_t byte = qs[32 * p + l];
      k.q[64 * p + l] = static_cast<uint8_t>((byte & 0xf) | (q5 ? ((qh[l] >> (2 * p)) & 1) << 4 : 0));
      k.q[64 * p + 32 + l] = static_cast<uint8_t>((byte >> 4) | (q5 ? ((qh[l] >> (2 * p + 1)) & 1) << 4 : 0));
    }
  return k;
}

void pack_k_rows(const WeightView& w, uint8_t* dst) {
  const KLayout l = k_layout(w.type);
  const bool q6 = w.type == DType::Q6_K;
  const int64_t n_super = w.cols / 256;
  for (int64_t g = 0; g * kPackRows < w.rows; ++g)
    for (int64_t s = 0; s < n_super; ++s, dst += l.super_bytes()) {
      std::memset(dst, 0, l.super_bytes());  // padding rows: zero scales, zero quants
      for (int64_t r = 0; r < kPackRows && g * kPackRows + r < w.rows; ++r) {
        const KRow k = read_k(w.type, w.data + (g * kPackRows + r) * w.row_bytes + s * dtype_traits(w.type).block_bytes);
        std::memcpy(dst + 2 * r, &k.d, 2);
        if (q6) {
          for (int h = 0; h < 16; ++h) dst[16 + 8 * h + r] = k.sc[h];
        } else {
          std::memcpy(dst + 16 + 2 * r, &k.dmin, 2);
          for (int j = 0; j < 8; ++j) {
            dst[32 + 8 * j + r] = k.sc[j];
            dst[96 + 8 * j + r] = k.mn[j];
          }
        }
        for (int j = 0; j < 8; ++j) {
          uint8_t* sub = dst + l.header + j * l.sub_bytes();
          const uint8_t* q = k.q + 32 * j;
          for (int i = 0; i < 4; ++i) {
            for (int e = 0; e < 4; ++e)  // nibbles: chunk i, lane r, byte e
              sub[32 * l.planes + 32 * i + 4 * r + e] = static_cast<uint8_t>((q[4 * i + e] & 0xf) | (q[16 + 4 * i + e] & 0xf) << 4);
            for (int plane = 0; plane < l.planes; ++plane) {  // bit 4 + plane, as Q5's fifth bits
              uint8_t v = 0;
              for (int e = 0; e < 4; ++e)
                v |= static_cast<uint8_t>(((q[4 * i + e] >> (4 + plane)) & 1) << e |
                                          ((q[16 + 4 * i + e] >> (4 + plane)) & 1) << (4 + e));
              sub[32 * plane + (r / 4) * 16 + (r % 4) * 4 + i] = v;
            }
          }
        }
      }
    }
}

// Element j (0..31) of row `lane` in a packed sub-block.
int k_quant(const uint8_t* sub, int planes, int64_t lane, int j) {
  const int i = (j % 16) / 4, e = j % 4, shift = j < 16 ? 0 : 4;
  int q = (sub[32 * planes + 32 * i + 4 * lane + e] >> shift) & 0xf;
  for (int plane = 0; plane < planes; ++plane)
    q |= ((sub[32 * plane + (lane / 4) * 16 + (lane % 4) * 4 + i] >> (shift + e)) & 1) << (4 + plane);
  return q;
}

void dequantize_k(const WeightView& w, int64_t r0, int64_t n, float* out) {
  const KLayout l = k_layout(w.type);
  const int64_t n_super = w.cols / 256;
  for (int64_t r = 0; r < n; ++r) {
    const int64_t row = r0 + r, lane = row % kPackRows;
    const uint8_t* sb = w.packed + static_cast<size_t>(row / kPackRows) * packed_group_bytes(w.type, w.cols);
    float* o = out + r * w.cols;
    for (int64_t s = 0; s < n_super; ++s, sb += l.super_bytes()) {
      const float d = half_at(sb + 2 * lane);
      for (int j = 0; j < 8; ++j, o += 32) {
        const uint8_t* sub = sb + l.header + j * l.sub_bytes();
        // The file formats' own expressions (tensor/dtype.cpp), for identical values.
        if (w.type == DType::Q6_K) {
          for (int c = 0; c < 32; ++c) {
            const auto sc = static_cast<int8_t>(sb[16 + 8 * (2 * j + c / 16) + lane]);
            o[c] = d * sc * (k_quant(sub, l.planes, lane, c) - 32);
          }
          continue;
        }
        const float d1 = d * sb[32 + 8 * j + lane], m1 = half_at(sb + 16 + 2 * lane) * sb[96 + 8 * j + lane];
        for (int c = 0; c < 32; ++c) o[c] = d1 * k_quant(sub, l.planes, lane, c) - m1;
      }
    }
  }
}

}  // namespace

bool packable(DType t) {
  return t == DType::Q4_0 || t == DType::Q4_1 || t == DType::Q5_0 || t == DType::Q5_1 || t == DType::Q8_0 ||
         is_k(t);
}

size_t packed_group_bytes(DType t, int64_t cols) {
  if (is_k(t)) return static_cast<size_t>(cols / 256) * k_layout(t).super_bytes();
  const Layout& l = layout(t);
  return static_cast<size_t>(cols / 32) * (quants_at(l) + l.quant_bytes);
}

size_t packed_bytes(DType t, int64_t rows, int64_t cols) {
  const int64_t groups = (rows + kPackRows - 1) / kPackRows;
  return static_cast<size_t>(groups) * packed_group_bytes(t, cols);
}

void pack_rows(const WeightView& w, uint8_t* dst) {
  if (is_k(w.type)) return pack_k_rows(w, dst);
  const Layout& l = layout(w.type);
  const size_t bytes = quants_at(l) + l.quant_bytes, qs = quants_at(l);
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
  if (is_k(w.type)) return dequantize_k(w, r0, n, out);
  const Layout& l = layout(w.type);
  const size_t gbytes = quants_at(l) + l.quant_bytes;
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
