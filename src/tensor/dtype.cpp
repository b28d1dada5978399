#include "tensor/dtype.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "base/error.hpp"
#include "tensor/fp16.hpp"

namespace minnow {
namespace {

constexpr int QK = 32;    // block size of the legacy quants
constexpr int QK_K = 256; // block size of the k-quants

inline uint16_t rd16(const uint8_t* p) { uint16_t v; std::memcpy(&v, p, 2); return v; }
inline float rdh(const uint8_t* p) { return fp16_to_fp32(rd16(p)); }

void deq_f32(const void* src, float* dst, int64_t n) { std::memcpy(dst, src, n * sizeof(float)); }
void deq_f16(const void* src, float* dst, int64_t n) {
  auto* s = static_cast<const uint8_t*>(src);
  for (int64_t i = 0; i < n; ++i) dst[i] = rdh(s + 2 * i);
}
void deq_bf16(const void* src, float* dst, int64_t n) {
  auto* s = static_cast<const uint8_t*>(src);
  for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_fp32(rd16(s + 2 * i));
}

// Q4_0: f16 d, 16 bytes of nibbles; low nibbles are elements 0..15, high 16..31; x = (q-8)*d.
void deq_q4_0(const void* src, float* dst, int64_t nb) {
  auto* b = static_cast<const uint8_t*>(src);
  for (int64_t i = 0; i < nb; ++i, b += 18, dst += QK) {
    float d = rdh(b);
    const uint8_t* qs = b + 2;
    for (int j = 0; j < 16; ++j) {
      dst[j] = ((qs[j] & 0xf) - 8) * d;
      dst[j + 16] = ((qs[j] >> 4) - 8) * d;
    }
  }
}

// Q4_1: f16 d, f16 m, 16 bytes of nibbles; x = q*d + m.
void deq_q4_1(const void* src, float* dst, int64_t nb) {
  auto* b = static_cast<const uint8_t*>(src);
  for (int64_t i = 0; i < nb; ++i, b += 20, dst += QK) {
    float d = rdh(b), m = rdh(b + 2);
    const uint8_t* qs = b + 4;
    for (int j = 0; j < 16; ++j) {
      dst[j] = (qs[j] & 0xf) * d + m;
      dst[j + 16] = (qs[j] >> 4) * d + m;
    }
  }
}

// Q5_0/Q5_1: as Q4 plus a 32-bit word whose bit j is the fifth bit of element j.
void deq_q5_0(const void* src, float* dst, int64_t nb) {
  auto* b = static_cast<const uint8_t*>(src);
  for (int64_t i = 0; i < nb; ++i, b += 22, dst += QK) {
    float d = rdh(b);
    uint32_t qh; std::memcpy(&qh, b + 2, 4);
    const uint8_t* qs = b + 6;
    for (int j = 0; j < 16; ++j) {
      int lo = (qs[j] & 0xf) | (((qh >> j) & 1) << 4);
      int hi = (qs[j] >> 4) | (((qh >> (j + 16)) & 1) << 4);
      dst[j] = (lo - 16) * d;
      dst[j + 16] = (hi - 16) * d;
    }
  }
}
void deq_q5_1(const void* src, float* dst, int64_t nb) {
  auto* b = static_cast<const uint8_t*>(src);
  for (int64_t i = 0; i < nb; ++i, b += 24, dst += QK) {
    float d = rdh(b), m = rdh(b + 2);
    uint32_t qh; std::memcpy(&qh, b + 4, 4);
    const uint8_t* qs = b + 8;
    for (int j = 0; j < 16; ++j) {
      int lo = (qs[j] & 0xf) | (((qh >> j) & 1) << 4);
      int hi = (qs[j] >> 4) | (((qh >> (j + 16)) & 1) << 4);
      dst[j] = lo * d + m;
      dst[j + 16] = hi * d + m;
    }
  }
}

// Q8_0: f16 d, 32 int8; x = q*d.
void deq_q8_0(const void* src, float* dst, int64_t nb) {
  auto* b = static_cast<const uint8_t*>(src);
  for (int64_t i = 0; i < nb; ++i, b += 34, dst += QK) {
    float d = rdh(b);
    auto* qs = reinterpret_cast<const int8_t*>(b + 2);
    for (int j = 0; j < QK; ++j) dst[j] = qs[j] * d;
  }
}

}  // namespace

void quantize_q8_0(const float* x, void* dst, int64_t n_blocks) {
  auto* b = static_cast<uint8_t*>(dst);
  for (int64_t i = 0; i < n_blocks; ++i, b += 34, x += QK) {
    float amax = 0;
    for (int j = 0; j < QK; ++j) amax = std::max(amax, std::fabs(x[j]));
    const float d = amax / 127.0f, inv = d > 0 ? 1.0f / d : 0.0f;
    const uint16_t h = fp32_to_fp16(d);
    std::memcpy(b, &h, 2);
    for (int j = 0; j < QK; ++j) b[2 + j] = static_cast<uint8_t>(static_cast<int8_t>(std::nearbyint(x[j] * inv)));
  }
}

namespace {

// Q8_1: f32 d, f32 s (= d * sum q), 32 int8 (an activation format, kept for completeness).
void deq_q8_1(const void* src, float* dst, int64_t nb) {
  auto* b = static_cast<const uint8_t*>(src);
  for (int64_t i = 0; i < nb; ++i, b += 40, dst += QK) {
    float d; std::memcpy(&d, b, 4);
    auto* qs = reinterpret_cast<const int8_t*>(b + 8);
    for (int j = 0; j < QK; ++j) dst[j] = qs[j] * d;
  }
}

// Q4_K: f16 d, f16 dmin, 12 bytes scales, 128 bytes nibbles; 8 sub-blocks of 32;
// x = d*sc*q - dmin*m. Each 32-byte run of qs holds two sub-blocks (low, then high nibbles).
void deq_q4_k(const void* src, float* dst, int64_t nb) {
  auto* b = static_cast<const uint8_t*>(src);
  for (int64_t i = 0; i < nb; ++i, b += 144) {
    float d = rdh(b), dmin = rdh(b + 2);
    const uint8_t* scales = b + 4;
    const uint8_t* q = b + 16;
    for (int j = 0; j < QK_K / 64; ++j, q += 32) {
      uint8_t sc, mn;
      k_scale_min(2 * j, scales, &sc, &mn);
      float d1 = d * sc, m1 = dmin * mn;
      k_scale_min(2 * j + 1, scales, &sc, &mn);
      float d2 = d * sc, m2 = dmin * mn;
      for (int l = 0; l < 32; ++l) *dst++ = d1 * (q[l] & 0xf) - m1;
      for (int l = 0; l < 32; ++l) *dst++ = d2 * (q[l] >> 4) - m2;
    }
  }
}

// Q5_K: as Q4_K plus 32 bytes qh; bit (2j) / (2j+1) of qh[l] is the fifth bit of element l
// of sub-block 2j / 2j+1.
void deq_q5_k(const void* src, float* dst, int64_t nb) {
  auto* b = static_cast<const uint8_t*>(src);
  for (int64_t i = 0; i < nb; ++i, b += 176) {
    float d = rdh(b), dmin = rdh(b + 2);
    const uint8_t* scales = b + 4;
    const uint8_t* qh = b + 16;
    const uint8_t* ql = b + 48;
    for (int j = 0; j < QK_K / 64; ++j, ql += 32) {
      uint8_t sc, mn;
      k_scale_min(2 * j, scales, &sc, &mn);
      float d1 = d * sc, m1 = dmin * mn;
      k_scale_min(2 * j + 1, scales, &sc, &mn);
      float d2 = d * sc, m2 = dmin * mn;
      uint8_t u1 = static_cast<uint8_t>(1u << (2 * j)), u2 = static_cast<uint8_t>(2u << (2 * j));
      for (int l = 0; l < 32; ++l) *dst++ = d1 * ((ql[l] & 0xf) + (qh[l] & u1 ? 16 : 0)) - m1;
      for (int l = 0; l < 32; ++l) *dst++ = d2 * ((ql[l] >> 4) + (qh[l] & u2 ? 16 : 0)) - m2;
    }
  }
}

// Q6_K: 128 bytes low nibbles, 64 bytes high 2-bit pairs, 16 int8 scales, f16 d;
// 16 sub-blocks of 16; x = d * scale * (q - 32).
void deq_q6_k(const void* src, float* dst, int64_t nb) {
  auto* b = static_cast<const uint8_t*>(src);
  for (int64_t i = 0; i < nb; ++i, b += 210) {
    const uint8_t* ql = b;
    const uint8_t* qh = b + 128;
    auto* sc = reinterpret_cast<const int8_t*>(b + 192);
    float d = rdh(b + 208);
    for (int n = 0; n < QK_K; n += 128, ql += 64, qh += 32, sc += 8, dst += 128) {
      for (int l = 0; l < 32; ++l) {
        int is = l / 16;
        int q1 = ((ql[l] & 0xf) | (((qh[l] >> 0) & 3) << 4)) - 32;
        int q2 = ((ql[l + 32] & 0xf) | (((qh[l] >> 2) & 3) << 4)) - 32;
        int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
        int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
        dst[l] = d * sc[is] * q1;
        dst[l + 32] = d * sc[is + 2] * q2;
        dst[l + 64] = d * sc[is + 4] * q3;
        dst[l + 96] = d * sc[is + 6] * q4;
      }
    }
  }
}

const DTypeTraits kTraits[] = {
    {DType::F32, "F32", 1, 4, deq_f32},
    {DType::F16, "F16", 1, 2, deq_f16},
    {DType::Q4_0, "Q4_0", QK, 18, deq_q4_0},
    {DType::Q4_1, "Q4_1", QK, 20, deq_q4_1},
    {DType::Q5_0, "Q5_0", QK, 22, deq_q5_0},
    {DType::Q5_1, "Q5_1", QK, 24, deq_q5_1},
    {DType::Q8_0, "Q8_0", QK, 34, deq_q8_0},
    {DType::Q8_1, "Q8_1", QK, 40, deq_q8_1},
    {DType::Q2_K, "Q2_K", QK_K, 84, nullptr},
    {DType::Q3_K, "Q3_K", QK_K, 110, nullptr},
    {DType::Q4_K, "Q4_K", QK_K, 144, deq_q4_k},
    {DType::Q5_K, "Q5_K", QK_K, 176, deq_q5_k},
    {DType::Q6_K, "Q6_K", QK_K, 210, deq_q6_k},
    {DType::Q8_K, "Q8_K", QK_K, 292, nullptr},
    {DType::BF16, "BF16", 1, 2, deq_bf16},
};

}  // namespace

const DTypeTraits* dtype_traits(uint32_t type_id) {
  for (const auto& t : kTraits)
    if (static_cast<uint32_t>(t.type) == type_id) return &t;
  return nullptr;
}

const DTypeTraits& dtype_traits(DType t) {
  const DTypeTraits* tr = dtype_traits(static_cast<uint32_t>(t));
  if (!tr) throw Error("unknown tensor type id " + std::to_string(static_cast<uint32_t>(t)));
  return *tr;
}

const char* dtype_name(DType t) {
  const DTypeTraits* tr = dtype_traits(static_cast<uint32_t>(t));
  return tr ? tr->name : "unknown";
}

std::optional<uint64_t> dtype_bytes(DType t, uint64_t n) {
  const DTypeTraits& tr = dtype_traits(t);
  uint64_t bs = static_cast<uint64_t>(tr.block_size);
  if (n % bs != 0) return std::nullopt;
  uint64_t blocks = n / bs, out;
  if (__builtin_mul_overflow(blocks, static_cast<uint64_t>(tr.block_bytes), &out)) return std::nullopt;
  return out;
}

}  // namespace minnow
