// AVX2 + FMA + F16C kernels. Compiled with those extensions; only reached after the
// run-time CPU check in dispatch.cpp.
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "kernels/isa_tables.hpp"
#include "kernels/ops.hpp"
#include "kernels/x86/attention_avx2.hpp"
#include "kernels/x86/elementwise.hpp"
#include "kernels/x86/fused_rows.hpp"
#include "kernels/x86/packed_amx.hpp"
#include "kernels/x86/packed_avx512.hpp"
#include "kernels/x86/packed_dot.hpp"
#include "kernels/x86/softmax.hpp"

namespace minnow::kernels {
namespace {

inline float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
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

void axpy_f16_avx2(float a, const uint16_t* x, float* y, int64_t n) {
  const __m256 va = _mm256_set1_ps(a);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(y + i, _mm256_fmadd_ps(va, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i))),
                                            _mm256_loadu_ps(y + i)));
  for (; i < n; ++i) y[i] += a * _cvtsh_ss(x[i]);
}

// Calls fn(std::integral_constant<int, NQ>) for nq (1..kMaxAttnQueries) query heads, so
// each attention kernel is compiled once per group size.
template <typename Fn>
inline void with_queries(int nq, Fn fn) {
  switch (nq) {
    case 1: return fn(std::integral_constant<int, 1>{});
    case 2: return fn(std::integral_constant<int, 2>{});
    case 3: return fn(std::integral_constant<int, 3>{});
    default: return fn(std::integral_constant<int, 4>{});
  }
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
  with_queries(nq, [&](auto g) { scores_f16<g.value>(q, k, stride, n, hd, s, s_stride); });
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
  with_queries(nq, [&](auto g) { values_f16<g.value>(w, w_stride, v, stride, n, hd, out); });
}

// Q8_0 cache rows: 8 values of a block, dequantized (q * d, as the reference does).
inline __m256 q8_values(const uint8_t* qs, __m256 d) {
  return _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(qs)))), d);
}

// Up to 4 queries per K row, each with one accumulator over the head's blocks in order.
template <int NQ>
void scores_q8(const float* q, const uint8_t* k, int64_t stride, int64_t n, int64_t hd, float* s, int64_t s_stride) {
  for (int64_t p = 0; p < n; ++p) {
    const uint8_t* row = k + p * stride;
    __m256 acc[NQ];
    for (int g = 0; g < NQ; ++g) acc[g] = _mm256_setzero_ps();
    for (int64_t b = 0; b < hd / 32; ++b) {
      const uint8_t* blk = row + b * 34;
      const __m256 d = _mm256_set1_ps(_cvtsh_ss(static_cast<uint16_t>(blk[0] | blk[1] << 8)));
      for (int c = 0; c < 4; ++c) {
        const __m256 kv = q8_values(blk + 2 + 8 * c, d);
        for (int g = 0; g < NQ; ++g) acc[g] = _mm256_fmadd_ps(kv, _mm256_loadu_ps(q + g * hd + 32 * b + 8 * c), acc[g]);
      }
    }
    for (int g = 0; g < NQ; ++g) s[g * s_stride + p] = hsum(acc[g]);
  }
}

void attn_scores_q8_avx2(const float* q, int nq, const uint8_t* k, int64_t stride, int64_t n, int64_t hd, float* s,
                         int64_t s_stride) {
  with_queries(nq, [&](auto g) { scores_q8<g.value>(q, k, stride, n, hd, s, s_stride); });
}

// Sixteen output columns (half a block) of up to 4 queries stay in registers over all
// positions, the FMAs of each column in position order.
template <int NQ>
void values_q8(const float* w, int64_t w_stride, const uint8_t* v, int64_t stride, int64_t n, int64_t hd, float* out) {
  for (int64_t c = 0; c < hd; c += 16) {
    const int64_t at = c / 32 * 34 + 2 + c % 32;  // the 16 values' bytes within a row
    __m256 acc[NQ][2];
    for (int g = 0; g < NQ; ++g) {
      acc[g][0] = _mm256_loadu_ps(out + g * hd + c);
      acc[g][1] = _mm256_loadu_ps(out + g * hd + c + 8);
    }
    for (int64_t p = 0; p < n; ++p) {
      const uint8_t* blk = v + p * stride + c / 32 * 34;
      const __m256 d = _mm256_set1_ps(_cvtsh_ss(static_cast<uint16_t>(blk[0] | blk[1] << 8)));
      const __m256 v0 = q8_values(v + p * stride + at, d), v1 = q8_values(v + p * stride + at + 8, d);
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
}

void attn_values_q8_avx2(const float* w, int nq, int64_t w_stride, const uint8_t* v, int64_t stride, int64_t n,
                         int64_t hd, float* out) {
  with_queries(nq, [&](auto g) { values_q8<g.value>(w, w_stride, v, stride, n, hd, out); });
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

// Rounds 32 values to integers of at most `limit` (quantize_q8 / quantize_q15's
// arithmetic, vectorized: the same max, scale, product and round-to-nearest-even), and
// returns them as 4 x 8 int32 with their sum and the scale.
template <int kLimit>
inline float round_block(const float* x, __m256i q[4], int32_t* sum) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  __m256 v[4], amax = _mm256_setzero_ps();
  for (int i = 0; i < 4; ++i) {
    v[i] = _mm256_loadu_ps(x + 8 * i);
    amax = _mm256_max_ps(amax, _mm256_andnot_ps(sign, v[i]));
  }
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(amax), _mm256_extractf128_ps(amax, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_movehdup_ps(m));
  const float d = _mm_cvtss_f32(m) / static_cast<float>(kLimit), inv = d > 0 ? 1.0f / d : 0.0f;
  const __m256 vinv = _mm256_set1_ps(inv);
  const __m256i lo = _mm256_set1_epi32(-kLimit), hi = _mm256_set1_epi32(kLimit);
  __m256i total = _mm256_setzero_si256();
  for (int i = 0; i < 4; ++i) {
    const __m256 r = _mm256_round_ps(_mm256_mul_ps(v[i], vinv), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    q[i] = _mm256_min_epi32(_mm256_max_epi32(_mm256_cvtps_epi32(r), lo), hi);
    total = _mm256_add_epi32(total, q[i]);
  }
  __m128i t = _mm_add_epi32(_mm256_castsi256_si128(total), _mm256_extracti128_si256(total, 1));
  t = _mm_add_epi32(t, _mm_shuffle_epi32(t, 0x4e));
  t = _mm_add_epi32(t, _mm_shuffle_epi32(t, 0xb1));
  *sum = _mm_cvtsi128_si32(t);
  return d;
}

// 4 x 8 int32 (each in -128..127) -> 32 int8 in order (packs interleave 128-bit lanes;
// the permute puts them back).
inline void store_bytes(const __m256i q[4], int8_t* out) {
  const __m256i p = _mm256_packs_epi16(_mm256_packs_epi32(q[0], q[1]), _mm256_packs_epi32(q[2], q[3]));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out),
                      _mm256_permutevar8x32_epi32(p, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)));
}

void quantize_q8_avx2(const float* x, int64_t k, Q8Block* out) {
  for (int64_t i = 0; i < k / 32; ++i, x += 32) {
    __m256i q[4];
    int32_t sum;
    out[i].d = round_block<127>(x, q, &sum);
    out[i].s = out[i].d * static_cast<float>(sum);
    store_bytes(q, out[i].q);
  }
}

void quantize_q15_avx2(const float* x, int64_t k, Q15Block* out) {
  const __m256i low7 = _mm256_set1_epi32(127);
  for (int64_t i = 0; i < k / 32; ++i, x += 32) {
    __m256i q[4], hi[4], lo[4];
    int32_t sum;
    out[i].d = round_block<16256>(x, q, &sum);
    out[i].s = out[i].d * static_cast<float>(sum);
    for (int j = 0; j < 4; ++j) {
      hi[j] = _mm256_srai_epi32(q[j], 7);
      lo[j] = _mm256_and_si256(q[j], low7);
    }
    store_bytes(hi, out[i].hi);
    store_bytes(lo, out[i].lo);
  }
}

}  // namespace

void sgemm_avx2(const float* a, int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc, int64_t m, int64_t n,
                int64_t k, const Epilogue& e);  // sgemm_avx2.cpp
void sgemm_rows_avx2(const float* a, int64_t lda, const float* const* b, float* c, int64_t ldc, int64_t m, int64_t n,
                     int64_t k, const Epilogue& e);
void sgemm_avx512(const float* a, int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc, int64_t m,
                  int64_t n, int64_t k, const Epilogue& e);  // sgemm_avx512.cpp
void sgemm_rows_avx512(const float* a, int64_t lda, const float* const* b, float* c, int64_t ldc, int64_t m, int64_t n,
                       int64_t k, const Epilogue& e);
void axpy_strided_avx2(float a, const float* x, int64_t stride, float* y, int64_t n);
void depthwise_row_avx2(const float* x, int64_t ldx, const float* w, int kh, int kw, int stride, float* y, int64_t n,
                        const Epilogue& e);
void depthwise8_row_avx2(const float* x, int64_t ldx, const float* w, int kh, int kw, int stride, float* y, int64_t n,
                         const Epilogue& e);  // depthwise8_avx2.cpp
void pointwise8_avx2(const float* x, int64_t ldx, const float* w, int64_t k, float* y, int64_t n, const Epilogue& e);
void pointwise16_avx2(const float* x, int64_t ldx, const float* w0, const float* w1, int64_t k, float* y0, float* y1,
                      int64_t n, const Epilogue& e0, const Epilogue& e1);
void interleave8_avx2(const float* src, int64_t ld, int lanes, int64_t n, float* dst);
void deinterleave8_avx2(const float* src, int lanes, int64_t n, float* dst, int64_t ld);

const KernelTable& avx2_kernels() {
  static const KernelTable t{.name = "avx2",
                             .dot_f32 = dot_f32_avx2,
                             .gemm_f32 = gemm_f32_avx2,
                             .sgemm = sgemm_avx2,
                             .sgemm_rows = sgemm_rows_avx2,
                             .axpy_strided = axpy_strided_avx2,
                             .depthwise_row = depthwise_row_avx2,
                             .depthwise8_row = depthwise8_row_avx2,
                             .pointwise8 = pointwise8_avx2,
                             .pointwise16 = pointwise16_avx2,
                             .interleave8 = interleave8_avx2,
                             .deinterleave8 = deinterleave8_avx2,
                             .f16 = dot_f16_avx2,
                             .q5_0_row = dot_q5_0_row_avx2,
                             .q5_1_row = dot_q5_1_row_avx2,
                             .q4_k_row = dot_q4_k_row_avx2,
                             .q5_k_row = dot_q5_k_row_avx2,
                             .q6_k_row = dot_q6_k_row_avx2,
                             .f16_to_f32 = f16_to_f32_avx2,
                             .f32_to_f16 = f32_to_f16_avx2,
                             .exp_sum = exp_sum_avx2,
                             .rmsnorm = rmsnorm_avx2,
                             .rope = rope_avx2,
                             .rope_store_kv_f16 = rope_store_kv_f16_avx2,
                             .glu_silu = glu_silu_avx2,
                             .glu_gelu_tanh = glu_gelu_tanh_avx2,
                             .gelu_erf = gelu_erf_avx2,
                             .sigmoid = sigmoid_avx2,
                             .axpy_f16 = axpy_f16_avx2,
                             .attn_scores_f16 = attn_scores_f16_avx2,
                             .attn_values_f16 = attn_values_f16_avx2,
                             .attn_scores_q8 = attn_scores_q8_avx2,
                             .attn_values_q8 = attn_values_q8_avx2,
                             .attn_softmax_tile = attn_softmax_tile_avx2,
                             .packed_q4_0 = packed_q4_0_avx2,
                             .packed_q4_1 = packed_q4_1_avx2,
                             .packed_q5_0 = packed_q5_0_avx2,
                             .packed_q5_1 = packed_q5_1_avx2,
                             .packed_q8_0 = packed_q8_0_avx2,
                             .packed_q4_k = packed_q4_k_avx2,
                             .packed_q5_k = packed_q5_k_avx2,
                             .packed_q6_k = packed_q6_k_avx2,
                             .packed15_q4_0 = packed15_q4_0_avx2,
                             .packed15_q4_1 = packed15_q4_1_avx2,
                             .packed15_q5_0 = packed15_q5_0_avx2,
                             .packed15_q5_1 = packed15_q5_1_avx2,
                             .packed15_q8_0 = packed15_q8_0_avx2,
                             .packed15_q4_k = packed15_q4_k_avx2,
                             .packed15_q5_k = packed15_q5_k_avx2,
                             .packed15_q6_k = packed15_q6_k_avx2,
                             .to_q8 = quantize_q8_avx2,
                             .to_q15 = quantize_q15_avx2,
                             .packed16 = nullptr,
                             .packed16_15 = nullptr,
                             .tiles = nullptr};
  return t;
}

namespace {

// The AVX2 table with the packed kernels of one vpdpbusd encoding.
#define MINNOW_WITH_PACKED(v, isa)                                                       \
  v.packed_q4_0 = packed_q4_0_##isa, v.packed_q4_1 = packed_q4_1_##isa;                   \
  v.packed_q5_0 = packed_q5_0_##isa, v.packed_q5_1 = packed_q5_1_##isa;                   \
  v.packed_q8_0 = packed_q8_0_##isa, v.packed_q4_k = packed_q4_k_##isa;                   \
  v.packed_q5_k = packed_q5_k_##isa, v.packed_q6_k = packed_q6_k_##isa;                   \
  v.packed15_q4_0 = packed15_q4_0_##isa, v.packed15_q4_1 = packed15_q4_1_##isa;           \
  v.packed15_q5_0 = packed15_q5_0_##isa, v.packed15_q5_1 = packed15_q5_1_##isa;           \
  v.packed15_q8_0 = packed15_q8_0_##isa, v.packed15_q4_k = packed15_q4_k_##isa;           \
  v.packed15_q5_k = packed15_q5_k_##isa, v.packed15_q6_k = packed15_q6_k_##isa

}  // namespace

const KernelTable& avx2_vnni_kernels() {
  static const KernelTable t = [] {
    KernelTable v = avx2_kernels();
    v.name = "avx2+vnni";
    MINNOW_WITH_PACKED(v, vnni);
    return v;
  }();
  return t;
}

const KernelTable& avx2_avx512vnni_kernels() {
  static const KernelTable t = [] {
    KernelTable v = avx2_kernels();
    v.name = "avx2+avx512vnni";
    MINNOW_WITH_PACKED(v, avx512vnni);
    v.sgemm = sgemm_avx512;
    v.sgemm_rows = sgemm_rows_avx512;
    return v;
  }();
  return t;
}

#undef MINNOW_WITH_PACKED

const KernelTable& avx512_kernels() {
  static const KernelTable t = [] {
    KernelTable v = avx2_avx512vnni_kernels();
    v.name = "avx512";
    v.packed16 = packed16_avx512;
    v.packed16_15 = packed16_15_avx512;
    return v;
  }();
  return t;
}

const KernelTable& avx512_amx_kernels() {
  static const KernelTable t = [] {
    KernelTable v = avx512_kernels();
    v.name = "avx512+amx";
    v.tiles = &packed_tiles_amx();
    return v;
  }();
  return t;
}

}  // namespace minnow::kernels
