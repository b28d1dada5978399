// AVX2 + FMA + F16C kernels. Compiled with those extensions; only reached after the
// run-time CPU check in dispatch.cpp.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels/ops.hpp"
#include "kernels/x86/fused_rows.hpp"
#include "kernels/x86/softmax.hpp"

namespace minnow::kernels {
namespace {

inline float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

inline float load_half(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return _cvtsh_ss(h);
}

float dot_f32_avx2(const float* a, const float* b, int64_t n) {
  __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps(), s2 = _mm256_setzero_ps(), s3 = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
    s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), s1);
    s2 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 16), _mm256_loadu_ps(b + i + 16), s2);
    s3 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 24), _mm256_loadu_ps(b + i + 24), s3);
  }
  for (; i + 8 <= n; i += 8) s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
  float s = hsum(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
  for (; i < n; ++i) s += a[i] * b[i];
  return s;
}

// One accumulator, then the scalar tail: the order of every tile of gemm_f32_avx2, so an
// output does not depend on whether its token fell in a tile or in the remainder.
float dot_f32_tile_order(const float* w, const float* x, int64_t k) {
  const int64_t k8 = k & ~int64_t{7};
  __m256 acc = _mm256_setzero_ps();
  for (int64_t i = 0; i < k8; i += 8) acc = _mm256_fmadd_ps(_mm256_loadu_ps(w + i), _mm256_loadu_ps(x + i), acc);
  float s = hsum(acc);
  for (int64_t i = k8; i < k; ++i) s += w[i] * x[i];
  return s;
}

// 4 weight rows x 3 tokens per step: 12 accumulators, 7 loads per 12 FMAs.
void gemm_f32_avx2(const float* w, int64_t rows, const float* x, int64_t n_tokens, int64_t k, float* y, int64_t ldy) {
  const int64_t k8 = k & ~int64_t{7};
  int64_t t = 0;
  for (; t + 3 <= n_tokens; t += 3) {
    const float* x0 = x + t * k;
    const float* x1 = x0 + k;
    const float* x2 = x1 + k;
    int64_t r = 0;
    for (; r + 4 <= rows; r += 4) {
      const float* w0 = w + r * k;
      const float* w1 = w0 + k;
      const float* w2 = w1 + k;
      const float* w3 = w2 + k;
      __m256 a00 = _mm256_setzero_ps(), a01 = a00, a02 = a00, a10 = a00, a11 = a00, a12 = a00;
      __m256 a20 = a00, a21 = a00, a22 = a00, a30 = a00, a31 = a00, a32 = a00;
      for (int64_t i = 0; i < k8; i += 8) {
        __m256 v0 = _mm256_loadu_ps(x0 + i), v1 = _mm256_loadu_ps(x1 + i), v2 = _mm256_loadu_ps(x2 + i);
        __m256 u = _mm256_loadu_ps(w0 + i);
        a00 = _mm256_fmadd_ps(u, v0, a00); a01 = _mm256_fmadd_ps(u, v1, a01); a02 = _mm256_fmadd_ps(u, v2, a02);
        u = _mm256_loadu_ps(w1 + i);
        a10 = _mm256_fmadd_ps(u, v0, a10); a11 = _mm256_fmadd_ps(u, v1, a11); a12 = _mm256_fmadd_ps(u, v2, a12);
        u = _mm256_loadu_ps(w2 + i);
        a20 = _mm256_fmadd_ps(u, v0, a20); a21 = _mm256_fmadd_ps(u, v1, a21); a22 = _mm256_fmadd_ps(u, v2, a22);
        u = _mm256_loadu_ps(w3 + i);
        a30 = _mm256_fmadd_ps(u, v0, a30); a31 = _mm256_fmadd_ps(u, v1, a31); a32 = _mm256_fmadd_ps(u, v2, a32);
      }
      float out[4][3] = {{hsum(a00), hsum(a01), hsum(a02)},
                         {hsum(a10), hsum(a11), hsum(a12)},
                         {hsum(a20), hsum(a21), hsum(a22)},
                         {hsum(a30), hsum(a31), hsum(a32)}};
      for (int64_t i = k8; i < k; ++i)
        for (int rr = 0; rr < 4; ++rr)
          for (int tt = 0; tt < 3; ++tt) out[rr][tt] += w[(r + rr) * k + i] * x[(t + tt) * k + i];
      for (int rr = 0; rr < 4; ++rr)
        for (int tt = 0; tt < 3; ++tt) y[(t + tt) * ldy + r + rr] = out[rr][tt];
    }
    for (; r < rows; ++r)
      for (int tt = 0; tt < 3; ++tt) y[(t + tt) * ldy + r] = dot_f32_tile_order(w + r * k, x + (t + tt) * k, k);
  }
  for (; t < n_tokens; ++t)
    for (int64_t r = 0; r < rows; ++r) y[t * ldy + r] = dot_f32_tile_order(w + r * k, x + t * k, k);
}

float dot_f16_avx2(const void* row, const float* x, int64_t k) {
  auto* h = static_cast<const uint16_t*>(row);
  __m256 acc = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 8 <= k; i += 8)
    acc = _mm256_fmadd_ps(_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(h + i))),
                          _mm256_loadu_ps(x + i), acc);
  float s = hsum(acc);
  for (; i < k; ++i) s += _cvtsh_ss(h[i]) * x[i];
  return s;
}

// Sum of 8 int32 lanes of maddubs(u, s) pairs, as floats: u unsigned bytes, s signed.
inline __m256 mul_sum_us8(__m256i u, __m256i s) {
  __m256i p16 = _mm256_maddubs_epi16(u, s);  // |pair sum| <= 2 * 255 * 128: no saturation for our ranges
  return _mm256_cvtepi32_ps(_mm256_madd_epi16(p16, _mm256_set1_epi16(1)));
}

// 16 bytes of nibbles -> 32 bytes: low nibbles (elements 0..15), then high (16..31).
inline __m256i unpack_nibbles(const uint8_t* qs) {
  __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
  __m128i mask = _mm_set1_epi8(0x0f);
  return _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(raw, 4), mask), _mm_and_si128(raw, mask));
}

inline __m256i load_q8(const Q8Block& x) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.q)); }

// Runs block(i, acc) over nb blocks, two at a time into separate accumulators: one
// accumulator (or an indexed pair, which compilers keep in memory) serializes on FMA latency.
template <typename Block>
inline float two_accumulators(int64_t nb, Block block) {
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 2 <= nb; i += 2) {
    acc0 = block(i, acc0);
    acc1 = block(i + 1, acc1);
  }
  if (i < nb) acc0 = block(i, acc0);
  return hsum(_mm256_add_ps(acc0, acc1));
}

float dot_q4_0_q8_avx2(const void* row, const Q8Block* x, int64_t k) {
  auto* b = static_cast<const uint8_t*>(row);
  const __m256i eight = _mm256_set1_epi8(8);
  return two_accumulators(k / 32, [&](int64_t i, __m256 acc) {
    // (q - 8) * a as one maddubs on |q - 8| with the sign moved onto a.
    const uint8_t* blk = b + i * 18;
    __m256i w = _mm256_sub_epi8(unpack_nibbles(blk + 2), eight);
    __m256 p = mul_sum_us8(_mm256_sign_epi8(w, w), _mm256_sign_epi8(load_q8(x[i]), w));
    return _mm256_fmadd_ps(_mm256_set1_ps(load_half(blk) * x[i].d), p, acc);
  });
}

float dot_q4_1_q8_avx2(const void* row, const Q8Block* x, int64_t k) {
  auto* b = static_cast<const uint8_t*>(row);
  float mins = 0;
  for (int64_t i = 0; i < k / 32; ++i) mins += load_half(b + i * 20 + 2) * x[i].s;  // m * sum a
  return mins + two_accumulators(k / 32, [&](int64_t i, __m256 acc) {
    const uint8_t* blk = b + i * 20;
    __m256 p = mul_sum_us8(unpack_nibbles(blk + 4), load_q8(x[i]));
    return _mm256_fmadd_ps(_mm256_set1_ps(load_half(blk) * x[i].d), p, acc);
  });
}

float dot_q8_0_q8_avx2(const void* row, const Q8Block* x, int64_t k) {
  auto* b = static_cast<const uint8_t*>(row);
  return two_accumulators(k / 32, [&](int64_t i, __m256 acc) {
    const uint8_t* blk = b + i * 34;
    __m256i w = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 2));
    __m256 p = mul_sum_us8(_mm256_sign_epi8(w, w), _mm256_sign_epi8(load_q8(x[i]), w));
    return _mm256_fmadd_ps(_mm256_set1_ps(load_half(blk) * x[i].d), p, acc);
  });
}

// 32 int16 weights (as two halves of 16) times 32 int16 activations, summed into 8 int32
// lanes with vpmaddwd (|w| <= 255, |x| <= 32767: pair sums fit easily), as floats.
inline __m256 madd16(__m256i w_lo, __m256i w_hi, const Q16Block& x) {
  __m256i a = _mm256_madd_epi16(w_lo, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.q)));
  __m256i b = _mm256_madd_epi16(w_hi, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.q + 16)));
  return _mm256_cvtepi32_ps(_mm256_add_epi32(a, b));
}

// 16 bytes of nibbles -> int16 lanes: low nibbles (elements 0..15), high (16..31).
inline void nibbles_to_i16(const uint8_t* qs, __m256i* lo, __m256i* hi) {
  __m256i v = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(qs)));
  *lo = _mm256_and_si256(v, _mm256_set1_epi16(0xf));
  *hi = _mm256_srli_epi16(v, 4);
}

float dot_q4_0_q16_avx2(const void* row, const Q16Block* x, const float*, int64_t k) {
  auto* b = static_cast<const uint8_t*>(row);
  const __m256i eight = _mm256_set1_epi16(8);
  return two_accumulators(k / 32, [&](int64_t i, __m256 acc) {
    const uint8_t* blk = b + i * 18;
    __m256i lo, hi;
    nibbles_to_i16(blk + 2, &lo, &hi);
    __m256 p = madd16(_mm256_sub_epi16(lo, eight), _mm256_sub_epi16(hi, eight), x[i]);
    return _mm256_fmadd_ps(_mm256_set1_ps(load_half(blk) * x[i].d), p, acc);
  });
}

float dot_q4_1_q16_avx2(const void* row, const Q16Block* x, const float* xsum, int64_t k) {
  auto* b = static_cast<const uint8_t*>(row);
  float mins = 0;
  for (int64_t i = 0; i < k / 32; ++i) mins += load_half(b + i * 20 + 2) * xsum[i];  // m * sum x
  return mins + two_accumulators(k / 32, [&](int64_t i, __m256 acc) {
    const uint8_t* blk = b + i * 20;
    __m256i lo, hi;
    nibbles_to_i16(blk + 4, &lo, &hi);
    return _mm256_fmadd_ps(_mm256_set1_ps(load_half(blk) * x[i].d), madd16(lo, hi, x[i]), acc);
  });
}

float dot_q8_0_q16_avx2(const void* row, const Q16Block* x, const float*, int64_t k) {
  auto* b = static_cast<const uint8_t*>(row);
  return two_accumulators(k / 32, [&](int64_t i, __m256 acc) {
    const uint8_t* blk = b + i * 34;
    __m256i lo = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + 2)));
    __m256i hi = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + 18)));
    return _mm256_fmadd_ps(_mm256_set1_ps(load_half(blk) * x[i].d), madd16(lo, hi, x[i]), acc);
  });
}

// Up to kMaxMultiTokens tokens against one weight row. unpack(i, &lo, &hi) returns block
// i's weights as int16 halves and its scale; per token, the accumulators, the order of
// the blocks and every rounding are those of two_accumulators in the one-token kernels.
template <int NT, typename Unpack>
inline void multi_tokens(int64_t nb, const Q16Block* x, Unpack unpack, float* out) {
  __m256 acc0[NT], acc1[NT];
  for (int t = 0; t < NT; ++t) acc0[t] = acc1[t] = _mm256_setzero_ps();
  auto block = [&](int64_t i, __m256* acc) {
    __m256i lo, hi;
    const float d = unpack(i, &lo, &hi);
    for (int t = 0; t < NT; ++t) {
      const Q16Block& xb = x[t * nb + i];
      acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(d * xb.d), madd16(lo, hi, xb), acc[t]);
    }
  };
  int64_t i = 0;
  for (; i + 2 <= nb; i += 2) {
    block(i, acc0);
    block(i + 1, acc1);
  }
  if (i < nb) block(i, acc0);
  for (int t = 0; t < NT; ++t) out[t] = hsum(_mm256_add_ps(acc0[t], acc1[t]));
}

template <typename Unpack>
inline void multi_dispatch(int n_tokens, int64_t nb, const Q16Block* x, Unpack unpack, float* out) {
  switch (n_tokens) {
    case 1: return multi_tokens<1>(nb, x, unpack, out);
    case 2: return multi_tokens<2>(nb, x, unpack, out);
    case 3: return multi_tokens<3>(nb, x, unpack, out);
    default: return multi_tokens<4>(nb, x, unpack, out);
  }
}

void dot_q4_0_q16_multi_avx2(const void* row, const Q16Block* x, const float*, int64_t k, int n_tokens, float* out) {
  auto* b = static_cast<const uint8_t*>(row);
  const __m256i eight = _mm256_set1_epi16(8);
  multi_dispatch(n_tokens, k / 32, x, [&](int64_t i, __m256i* lo, __m256i* hi) {
    const uint8_t* blk = b + i * 18;
    nibbles_to_i16(blk + 2, lo, hi);
    *lo = _mm256_sub_epi16(*lo, eight);
    *hi = _mm256_sub_epi16(*hi, eight);
    return load_half(blk);
  }, out);
}

void dot_q4_1_q16_multi_avx2(const void* row, const Q16Block* x, const float* xsum, int64_t k, int n_tokens, float* out) {
  auto* b = static_cast<const uint8_t*>(row);
  const int64_t nb = k / 32;
  multi_dispatch(n_tokens, nb, x, [&](int64_t i, __m256i* lo, __m256i* hi) {
    const uint8_t* blk = b + i * 20;
    nibbles_to_i16(blk + 4, lo, hi);
    return load_half(blk);
  }, out);
  // m * sum(x) per token, summed block by block as the one-token kernel does; the block
  // minimums are converted once (a chunk at a time) for all tokens.
  float mins[kMaxMultiTokens] = {0, 0, 0, 0};
  constexpr int64_t kChunk = 64;
  float m[kChunk];
  for (int64_t i0 = 0; i0 < nb; i0 += kChunk) {
    const int64_t n = std::min(kChunk, nb - i0);
    for (int64_t i = 0; i < n; ++i) m[i] = load_half(b + (i0 + i) * 20 + 2);
    for (int t = 0; t < n_tokens; ++t)
      for (int64_t i = 0; i < n; ++i) mins[t] += m[i] * xsum[t * nb + i0 + i];
  }
  for (int t = 0; t < n_tokens; ++t) out[t] = mins[t] + out[t];
}

void dot_q8_0_q16_multi_avx2(const void* row, const Q16Block* x, const float*, int64_t k, int n_tokens, float* out) {
  auto* b = static_cast<const uint8_t*>(row);
  multi_dispatch(n_tokens, k / 32, x, [&](int64_t i, __m256i* lo, __m256i* hi) {
    const uint8_t* blk = b + i * 34;
    *lo = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + 2)));
    *hi = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + 18)));
    return load_half(blk);
  }, out);
}

void axpy_f16_avx2(float a, const uint16_t* x, float* y, int64_t n) {
  const __m256 va = _mm256_set1_ps(a);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(y + i, _mm256_fmadd_ps(va, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i))),
                                            _mm256_loadu_ps(y + i)));
  for (; i < n; ++i) y[i] += a * _cvtsh_ss(x[i]);
}

// Up to 4 queries per K row: the row's halves are converted once per 8 values for all of
// them; each dot is dot_f16_avx2's sequence (one accumulator, hsum, scalar tail).
template <int NQ>
void scores_f16(const float* q, const uint16_t* k, int64_t stride, int64_t n, int64_t hd, float* s, int64_t s_stride) {
  const int64_t hd8 = hd & ~int64_t{7};
  for (int64_t p = 0; p < n; ++p) {
    const uint16_t* row = k + p * stride;
    __m256 acc[NQ];
    for (int g = 0; g < NQ; ++g) acc[g] = _mm256_setzero_ps();
    for (int64_t i = 0; i < hd8; i += 8) {
      const __m256 kv = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + i)));
      for (int g = 0; g < NQ; ++g) acc[g] = _mm256_fmadd_ps(kv, _mm256_loadu_ps(q + g * hd + i), acc[g]);
    }
    for (int g = 0; g < NQ; ++g) {
      float x = hsum(acc[g]);
      for (int64_t i = hd8; i < hd; ++i) x += _cvtsh_ss(row[i]) * q[g * hd + i];
      s[g * s_stride + p] = x;
    }
  }
}

void attn_scores_f16_avx2(const float* q, int nq, const uint16_t* k, int64_t stride, int64_t n, int64_t hd, float* s,
                          int64_t s_stride) {
  switch (nq) {
    case 1: return scores_f16<1>(q, k, stride, n, hd, s, s_stride);
    case 2: return scores_f16<2>(q, k, stride, n, hd, s, s_stride);
    case 3: return scores_f16<3>(q, k, stride, n, hd, s, s_stride);
    default: return scores_f16<4>(q, k, stride, n, hd, s, s_stride);
  }
}

// Sixteen output columns of up to 4 queries stay in registers over all positions; per
// column the FMAs run in position order, as axpy_f16_avx2 applies them.
template <int NQ>
void values_f16(const float* w, int64_t w_stride, const uint16_t* v, int64_t stride, int64_t n, int64_t hd, float* out) {
  int64_t c = 0;
  for (; c + 16 <= hd; c += 16) {
    __m256 acc[NQ][2];
    for (int g = 0; g < NQ; ++g) {
      acc[g][0] = _mm256_loadu_ps(out + g * hd + c);
      acc[g][1] = _mm256_loadu_ps(out + g * hd + c + 8);
    }
    for (int64_t p = 0; p < n; ++p) {
      const uint16_t* row = v + p * stride + c;
      const __m256 v0 = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row)));
      const __m256 v1 = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + 8)));
      for (int g = 0; g < NQ; ++g) {
        const __m256 a = _mm256_set1_ps(w[g * w_stride + p]);
        acc[g][0] = _mm256_fmadd_ps(a, v0, acc[g][0]);
        acc[g][1] = _mm256_fmadd_ps(a, v1, acc[g][1]);
      }
    }
    for (int g = 0; g < NQ; ++g) {
      _mm256_storeu_ps(out + g * hd + c, acc[g][0]);
      _mm256_storeu_ps(out + g * hd + c + 8, acc[g][1]);
    }
  }
  if (c < hd)  // the remaining columns, position by position as before
    for (int64_t p = 0; p < n; ++p)
      for (int g = 0; g < NQ; ++g) axpy_f16_avx2(w[g * w_stride + p], v + p * stride + c, out + g * hd + c, hd - c);
}

void attn_values_f16_avx2(const float* w, int nq, int64_t w_stride, const uint16_t* v, int64_t stride, int64_t n,
                          int64_t hd, float* out) {
  switch (nq) {
    case 1: return values_f16<1>(w, w_stride, v, stride, n, hd, out);
    case 2: return values_f16<2>(w, w_stride, v, stride, n, hd, out);
    case 3: return values_f16<3>(w, w_stride, v, stride, n, hd, out);
    default: return values_f16<4>(w, w_stride, v, stride, n, hd, out);
  }
}

void f16_to_f32_avx2(const uint16_t* src, float* dst, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i))));
  for (; i < n; ++i) dst[i] = _cvtsh_ss(src[i]);
}

void f32_to_f16_avx2(const float* src, uint16_t* dst, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT));
  for (; i < n; ++i) dst[i] = _cvtss_sh(src[i], _MM_FROUND_TO_NEAREST_INT);
}

}  // namespace

const KernelTable* x86_kernels() {
  static const KernelTable t{"avx2", dot_f32_avx2, gemm_f32_avx2, dot_f16_avx2, dot_q4_0_q8_avx2, dot_q4_1_q8_avx2, dot_q8_0_q8_avx2,
                             dot_q4_0_q16_avx2, dot_q4_1_q16_avx2, dot_q8_0_q16_avx2,
                             dot_q5_0_row_avx2, dot_q5_1_row_avx2, dot_q4_k_row_avx2, dot_q5_k_row_avx2, dot_q6_k_row_avx2,
                             f16_to_f32_avx2, f32_to_f16_avx2, exp_sum_avx2, axpy_f16_avx2,
                             attn_scores_f16_avx2, attn_values_f16_avx2,
                             dot_q4_0_q16_multi_avx2, dot_q4_1_q16_multi_avx2, dot_q8_0_q16_multi_avx2};
  return &t;
}

}  // namespace minnow::kernels
