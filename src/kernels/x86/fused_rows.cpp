#include "kernels/x86/fused_rows.hpp"

#include <immintrin.h>

#include <cstring>

namespace minnow::kernels {
namespace {

float half(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return _cvtsh_ss(h);
}

float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// 8 unsigned bytes -> 8 floats.
inline __m256 widen(__m128i bytes) { return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(bytes)); }

// Sums over 16 elements: q (unsigned bytes) times x, and x alone, as 8-lane partial sums.
struct Sums {
  __m256 qx, xs;
};
inline Sums sums16(__m128i q, const float* x) {
  const __m256 x0 = _mm256_loadu_ps(x), x1 = _mm256_loadu_ps(x + 8);
  return {_mm256_fmadd_ps(widen(_mm_srli_si128(q, 8)), x1, _mm256_mul_ps(widen(q), x0)), _mm256_add_ps(x0, x1)};
}
inline Sums sums32(__m256i q, const float* x) {
  const Sums a = sums16(_mm256_castsi256_si128(q), x), b = sums16(_mm256_extracti128_si256(q, 1), x + 16);
  return {_mm256_add_ps(a.qx, b.qx), _mm256_add_ps(a.xs, b.xs)};
}

// acc += d * sum(q x) - m * sum(x)
inline __m256 apply(__m256 acc, Sums s, float d, float m) {
  return _mm256_fnmadd_ps(_mm256_set1_ps(m), s.xs, _mm256_fmadd_ps(_mm256_set1_ps(d), s.qx, acc));
}

// 16 bytes of nibbles -> 32 bytes: low nibbles (elements 0..15), then high (16..31).
inline __m256i nibbles32(const uint8_t* qs) {
  const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
  const __m128i mask = _mm_set1_epi8(0x0f);
  return _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(raw, 4), mask), _mm_and_si128(raw, mask));
}

// Bit i of 32 bits -> byte i = 0x10 if set (the fifth bit of Q5_0/Q5_1 quants).
inline __m256i fifth_bits(const uint8_t* qh) {
  uint32_t bits;
  std::memcpy(&bits, qh, 4);
  const __m256i spread = _mm256_shuffle_epi8(
      _mm256_set1_epi32(static_cast<int>(bits)),
      _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3));
  const __m256i mask = _mm256_set1_epi64x(0x8040201008040201LL);
  return _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(spread, mask), mask), _mm256_set1_epi8(0x10));
}

// The 6-bit scale and min of sub-block j of a Q4_K/Q5_K block (GGUF's packing).
inline void scale_min(int j, const uint8_t* s, float& sc, float& mn) {
  if (j < 4) {
    sc = static_cast<float>(s[j] & 63);
    mn = static_cast<float>(s[j + 4] & 63);
  } else {
    sc = static_cast<float>((s[j + 4] & 0xf) | ((s[j - 4] >> 6) << 4));
    mn = static_cast<float>((s[j + 4] >> 4) | ((s[j] >> 6) << 4));
  }
}

}  // namespace

// Q5_0: f16 d, 4 bytes of fifth bits, 16 bytes of nibbles; x = d (q - 16).
float dot_q5_0_row_avx2(const void* row, const float* x, int64_t k) {
  auto* b = static_cast<const uint8_t*>(row);
  __m256 acc = _mm256_setzero_ps();
  for (int64_t i = 0; i < k / 32; ++i, b += 22, x += 32) {
    const float d = half(b);
    const __m256i q = _mm256_or_si256(nibbles32(b + 6), fifth_bits(b + 2));
    acc = apply(acc, sums32(q, x), d, 16 * d);
  }
  return hsum(acc);
}

// Q5_1: f16 d, f16 m, 4 bytes of fifth bits, 16 bytes of nibbles; x = d q + m.
float dot_q5_1_row_avx2(const void* row, const float* x, int64_t k) {
  auto* b = static_cast<const uint8_t*>(row);
  __m256 acc = _mm256_setzero_ps();
  for (int64_t i = 0; i < k / 32; ++i, b += 24, x += 32) {
    const __m256i q = _mm256_or_si256(nibbles32(b + 8), fifth_bits(b + 4));
    acc = apply(acc, sums32(q, x), half(b), -half(b + 2));
  }
  return hsum(acc);
}

// Q4_K: f16 d, f16 dmin, 12 bytes of scales/mins, 128 bytes of nibbles; 8 sub-blocks of 32,
// each 32-byte run of nibbles holding two (low nibbles first).
float dot_q4_k_row_avx2(const void* row, const float* x, int64_t k) {
  auto* b = static_cast<const uint8_t*>(row);
  const __m256i mask = _mm256_set1_epi8(0x0f);
  __m256 acc = _mm256_setzero_ps();
  for (int64_t i = 0; i < k / 256; ++i, b += 144) {
    const float d = half(b), dmin = half(b + 2);
    const uint8_t* q = b + 16;
    for (int j = 0; j < 4; ++j, q += 32, x += 64) {
      const __m256i raw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q));
      float sc, mn;
      scale_min(2 * j, b + 4, sc, mn);
      acc = apply(acc, sums32(_mm256_and_si256(raw, mask), x), d * sc, dmin * mn);
      scale_min(2 * j + 1, b + 4, sc, mn);
      acc = apply(acc, sums32(_mm256_and_si256(_mm256_srli_epi16(raw, 4), mask), x + 32), d * sc, dmin * mn);
    }
  }
  return hsum(acc);
}

// Q5_K: as Q4_K plus 32 bytes of fifth bits: bit 2j / 2j+1 of qh[l] belongs to element l
// of sub-block 2j / 2j+1.
float dot_q5_k_row_avx2(const void* row, const float* x, int64_t k) {
  auto* b = static_cast<const uint8_t*>(row);
  const __m256i mask = _mm256_set1_epi8(0x0f), one = _mm256_set1_epi8(1);
  __m256 acc = _mm256_setzero_ps();
  for (int64_t i = 0; i < k / 256; ++i, b += 176) {
    const float d = half(b), dmin = half(b + 2);
    const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 16));
    const uint8_t* ql = b + 48;
    for (int j = 0; j < 4; ++j, ql += 32, x += 64) {
      const __m256i raw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ql));
      const __m256i h = _mm256_srl_epi16(qh, _mm_cvtsi32_si128(2 * j));
      const __m256i h0 = _mm256_slli_epi16(_mm256_and_si256(h, one), 4);
      const __m256i h1 = _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(h, 1), one), 4);
      float sc, mn;
      scale_min(2 * j, b + 4, sc, mn);
      acc = apply(acc, sums32(_mm256_or_si256(_mm256_and_si256(raw, mask), h0), x), d * sc, dmin * mn);
      scale_min(2 * j + 1, b + 4, sc, mn);
      acc = apply(acc, sums32(_mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(raw, 4), mask), h1), x + 32), d * sc,
                  dmin * mn);
    }
  }
  return hsum(acc);
}

// Q6_K: 128 bytes of low nibbles, 64 bytes of 2-bit high parts, 16 int8 scales, f16 d;
// 16 sub-blocks of 16; x = d scale (q - 32). Each half (128 elements) holds four runs of 32.
float dot_q6_k_row_avx2(const void* row, const float* x, int64_t k) {
  auto* b = static_cast<const uint8_t*>(row);
  const __m256i mask = _mm256_set1_epi8(0x0f), three = _mm256_set1_epi8(3);
  __m256 acc = _mm256_setzero_ps();
  for (int64_t i = 0; i < k / 256; ++i, b += 210) {
    const float d = half(b + 208);
    const uint8_t* ql = b;
    const uint8_t* qhp = b + 128;
    auto* sc = reinterpret_cast<const int8_t*>(b + 192);
    for (int half_ = 0; half_ < 2; ++half_, ql += 64, qhp += 32, sc += 8, x += 128) {
      const __m256i l0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ql));
      const __m256i l1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ql + 32));
      const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qhp));
      auto high = [&](int shift) { return _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, shift), three), 4); };
      const __m256i q[4] = {
          _mm256_or_si256(_mm256_and_si256(l0, mask), high(0)),
          _mm256_or_si256(_mm256_and_si256(l1, mask), high(2)),
          _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), mask), high(4)),
          _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), mask), high(6)),
      };
      for (int r = 0; r < 4; ++r) {  // run r covers elements 32r..32r+31: sub-blocks 2r, 2r+1
        const float d0 = d * sc[2 * r], d1 = d * sc[2 * r + 1];
        acc = apply(acc, sums16(_mm256_castsi256_si128(q[r]), x + 32 * r), d0, 32 * d0);
        acc = apply(acc, sums16(_mm256_extracti128_si256(q[r], 1), x + 32 * r + 16), d1, 32 * d1);
      }
    }
  }
  return hsum(acc);
}

}  // namespace minnow::kernels
