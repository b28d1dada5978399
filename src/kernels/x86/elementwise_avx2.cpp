// AVX2 versions of the fused element-wise kernels. RMSNorm and RoPE do the reference's
// arithmetic in the same order (no FMA where it would change a rounding), so they match
// it to the last bit or nearly (RMSNorm's double sum of squares may round once
// differently: 1 ulp of the scale). The GLU activations use a vectorized exp, within a
// few ulps of std::exp (see exp_ps).
#include <immintrin.h>

#include <algorithm>
#include <cmath>

#include "kernels/x86/elementwise.hpp"
#include "kernels/x86/exp.hpp"
#include "tensor/fp16.hpp"

namespace minnow::kernels {
namespace {

inline double hsum(__m256d v) {
  const __m128d s = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
  return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
}

// Eight rotated values to f32 or (rounded to nearest even, as fp32_to_fp16) to f16.
inline void put8(float* p, __m256 v) { _mm256_storeu_ps(p, v); }
inline void put8(uint16_t* p, __m256 v) {
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
}
inline void put1(float* p, float v) { *p = v; }
inline void put1(uint16_t* p, float v) { *p = fp32_to_fp16(v); }

// Adjacent pairs take four per vector: x = (a0 b0 a1 b1 ..), swapped = (b0 a0 b1 a1 ..),
// and x * (c0 c0 c1 c1 ..) + swapped * (-s0 s0 -s1 s1 ..) gives a c - b s and b c + a s.
// These are the two factor vectors for pairs i..i+3.
inline void pair_factors(const float* cos, const float* sin, int64_t i, __m256* c, __m256* s) {
  const __m256 even_sign = _mm256_setr_ps(-0.0f, 0.0f, -0.0f, 0.0f, -0.0f, 0.0f, -0.0f, 0.0f);
  const __m128 c4 = _mm_loadu_ps(cos + i), s4 = _mm_loadu_ps(sin + i);
  *c = _mm256_set_m128(_mm_unpackhi_ps(c4, c4), _mm_unpacklo_ps(c4, c4));
  *s = _mm256_xor_ps(_mm256_set_m128(_mm_unpackhi_ps(s4, s4), _mm_unpacklo_ps(s4, s4)), even_sign);
}

// The factors of every pair of a head (a multiple of 4 of them), built once per call and
// shared by its heads: the rotation itself is then a load, a shuffle, two multiplies and
// an add per 8 values. Heads up to kMaxTableDim use them; longer ones build them as they go.
constexpr int64_t kMaxTableDim = 512;
struct PairTable {
  float c[kMaxTableDim], s[kMaxTableDim];
  bool used;
  PairTable(const float* cos, const float* sin, int64_t head_dim, bool half_split)
      : used(!half_split && head_dim <= kMaxTableDim) {
    if (!used) return;
    for (int64_t i = 0; i + 4 <= head_dim / 2; i += 4) {
      __m256 cv, sv;
      pair_factors(cos, sin, i, &cv, &sv);
      _mm256_storeu_ps(c + 2 * i, cv);
      _mm256_storeu_ps(s + 2 * i, sv);
    }
  }
};

// One head of RoPE from v to out (out may be v): (a, b) -> (a cos - b sin, a sin + b cos)
// with separate multiplies and adds, as the reference rounds them.
template <class Out>
void rotate_head(const float* v, int64_t head_dim, const float* cos, const float* sin, bool half_split,
                 const PairTable& table, Out* out) {
  const int64_t half = head_dim / 2;
  int64_t i = 0;
  if (half_split) {
    for (; i + 8 <= half; i += 8) {
      const __m256 a = _mm256_loadu_ps(v + i), b = _mm256_loadu_ps(v + half + i);
      const __m256 c = _mm256_loadu_ps(cos + i), s = _mm256_loadu_ps(sin + i);
      put8(out + i, _mm256_sub_ps(_mm256_mul_ps(a, c), _mm256_mul_ps(b, s)));
      put8(out + half + i, _mm256_add_ps(_mm256_mul_ps(a, s), _mm256_mul_ps(b, c)));
    }
    for (; i < half; ++i) {
      const float a = v[i], b = v[half + i];
      put1(out + i, a * cos[i] - b * sin[i]);
      put1(out + half + i, a * sin[i] + b * cos[i]);
    }
    return;
  }
  for (; i + 4 <= half; i += 4) {
    __m256 c, s;
    if (table.used) {
      c = _mm256_loadu_ps(table.c + 2 * i);
      s = _mm256_loadu_ps(table.s + 2 * i);
    } else {
      pair_factors(cos, sin, i, &c, &s);
    }
    const __m256 x = _mm256_loadu_ps(v + 2 * i);
    const __m256 swapped = _mm256_permute_ps(x, 0xB1);
    put8(out + 2 * i, _mm256_add_ps(_mm256_mul_ps(x, c), _mm256_mul_ps(swapped, s)));
  }
  for (; i < half; ++i) {
    const float a = v[2 * i], b = v[2 * i + 1];
    put1(out + 2 * i, a * cos[i] - b * sin[i]);
    put1(out + 2 * i + 1, a * sin[i] + b * cos[i]);
  }
}

// out[i] = gate[i] * sigmoid(k * z(gate[i])) * up[i], sigmoid(t) = 1 / (1 + e^-t): with
// z(x) = x, k = 1 it is SiLU; with z(x) = x + 0.044715 x^3, k = 2 sqrt(2/pi) it is the
// tanh GELU (0.5 x (1 + tanh(u)) = x / (1 + e^-2u)), a form with no cancellation for
// negative x. The tail (n % 8 values) takes the reference's scalar formula.
template <bool kGelu>
void glu(const float* gate, const float* up, float* out, int64_t n, float (*scalar)(float)) {
  const __m256 one = _mm256_set1_ps(1.0f), cubic = _mm256_set1_ps(0.044715f);
  const __m256 minus_k = _mm256_set1_ps(kGelu ? -1.5957691216057308f : -1.0f);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 x = _mm256_loadu_ps(gate + i);
    __m256 z = x;
    if constexpr (kGelu) z = _mm256_add_ps(x, _mm256_mul_ps(cubic, _mm256_mul_ps(_mm256_mul_ps(x, x), x)));
    const __m256 denominator = _mm256_add_ps(one, exp_ps(_mm256_mul_ps(minus_k, z)));
    _mm256_storeu_ps(out + i, _mm256_mul_ps(_mm256_div_ps(x, denominator), _mm256_loadu_ps(up + i)));
  }
  for (; i < n; ++i) out[i] = scalar(gate[i]) * up[i];
}

float silu(float x) { return x / (1.0f + std::exp(-x)); }
float gelu_tanh(float x) { return 0.5f * x * (1.0f + std::tanh(0.7978845608028654f * (x + 0.044715f * x * x * x))); }

}  // namespace

void rmsnorm_avx2(const float* x, const float* w, float* y, int64_t rows, int64_t d, float eps) {
  for (int64_t r = 0; r < rows; ++r, x += d, y += d) {
    // Squares summed in double as the reference does (exact products; the order changes
    // the double sum by ~1e-16 relative, which almost never survives rounding to float).
    __m256d s0 = _mm256_setzero_pd(), s1 = _mm256_setzero_pd(), s2 = _mm256_setzero_pd(), s3 = _mm256_setzero_pd();
    int64_t i = 0;
    for (; i + 16 <= d; i += 16) {
      const __m256 u = _mm256_loadu_ps(x + i), v = _mm256_loadu_ps(x + i + 8);
      const __m256d u0 = _mm256_cvtps_pd(_mm256_castps256_ps128(u)), u1 = _mm256_cvtps_pd(_mm256_extractf128_ps(u, 1));
      const __m256d v0 = _mm256_cvtps_pd(_mm256_castps256_ps128(v)), v1 = _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1));
      s0 = _mm256_fmadd_pd(u0, u0, s0);
      s1 = _mm256_fmadd_pd(u1, u1, s1);
      s2 = _mm256_fmadd_pd(v0, v0, s2);
      s3 = _mm256_fmadd_pd(v1, v1, s3);
    }
    double ss = hsum(_mm256_add_pd(_mm256_add_pd(s0, s1), _mm256_add_pd(s2, s3)));
    for (; i < d; ++i) ss += static_cast<double>(x[i]) * x[i];
    const float scale = 1.0f / std::sqrt(static_cast<float>(ss / static_cast<double>(d)) + eps);
    const __m256 sc = _mm256_set1_ps(scale);
    for (i = 0; i + 8 <= d; i += 8)
      _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_mul_ps(_mm256_loadu_ps(x + i), sc), _mm256_loadu_ps(w + i)));
    for (; i < d; ++i) y[i] = x[i] * scale * w[i];
  }
}

void rope_avx2(float* x, int64_t n_heads, int64_t head_dim, const float* cos, const float* sin, bool half_split) {
  const PairTable table(cos, sin, head_dim, half_split);
  for (int64_t h = 0; h < n_heads; ++h)
    rotate_head(x + h * head_dim, head_dim, cos, sin, half_split, table, x + h * head_dim);
}

void rope_store_kv_f16_avx2(const float* k, const float* v, int64_t n_heads, int64_t head_dim, const float* cos,
                            const float* sin, bool half_split, uint16_t* k_out, uint16_t* v_out) {
  const PairTable table(cos, sin, head_dim, half_split);
  for (int64_t h = 0; h < n_heads; ++h)
    rotate_head(k + h * head_dim, head_dim, cos, sin, half_split, table, k_out + h * head_dim);
  const int64_t n = n_heads * head_dim;
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) put8(v_out + i, _mm256_loadu_ps(v + i));
  for (; i < n; ++i) v_out[i] = fp32_to_fp16(v[i]);
}

void glu_silu_avx2(const float* gate, const float* up, float* out, int64_t n) { glu<false>(gate, up, out, n, silu); }

void glu_gelu_tanh_avx2(const float* gate, const float* up, float* out, int64_t n) {
  glu<true>(gate, up, out, n, gelu_tanh);
}

// GELU through erfc(z), z = |x| / sqrt 2: erfc(z) = t exp(-z^2 + P(t)), t = 1 / (1 + z/2), with
// the degree-9 Chebyshev-fitted P of Numerical Recipes (erfcc: fractional error < 1.2e-7).
// x < 0: x/2 erfc(z); x >= 0: x/2 (2 - erfc(z)); no cancellation on either side.
inline __m256 gelu_erf8(__m256 x) {
  const __m256 z = _mm256_mul_ps(_mm256_andnot_ps(_mm256_set1_ps(-0.0f), x), _mm256_set1_ps(0.70710678118654752f));
  const __m256 t = _mm256_div_ps(_mm256_set1_ps(1.0f), _mm256_fmadd_ps(z, _mm256_set1_ps(0.5f), _mm256_set1_ps(1.0f)));
  static constexpr float kP[] = {0.17087277f, -0.82215223f, 1.48851587f, -1.13520398f, 0.27886807f,
                                 -0.18628806f, 0.09678418f,  0.37409196f, 1.00002368f, -1.26551223f};
  __m256 p = _mm256_set1_ps(kP[0]);
  for (int i = 1; i < 10; ++i) p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(kP[i]));
  const __m256 erfc = _mm256_mul_ps(t, exp_ps(_mm256_fnmadd_ps(z, z, p)));
  const __m256 neg = _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_LT_OQ);
  const __m256 phi2 = _mm256_blendv_ps(_mm256_sub_ps(_mm256_set1_ps(2.0f), erfc), erfc, neg);  // 2 Phi(x)
  return _mm256_mul_ps(_mm256_mul_ps(x, _mm256_set1_ps(0.5f)), phi2);
}

namespace {

// out[i] = f(x[i]) 8 values at a time, the last few through the same f, zero-padded (out
// may be x).
template <class F>
void map8(const float* x, float* out, int64_t n, F f) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, f(_mm256_loadu_ps(x + i)));
  if (i == n) return;
  float tail[8] = {};
  std::copy(x + i, x + n, tail);
  _mm256_storeu_ps(tail, f(_mm256_loadu_ps(tail)));
  std::copy(tail, tail + (n - i), out + i);
}

}  // namespace

void gelu_erf_avx2(const float* x, float* out, int64_t n) { map8(x, out, n, gelu_erf8); }

// 1 / (1 + e^-x): exp_ps saturates at both ends of its range, so the quotient goes to 0
// and 1 without NaN.
void sigmoid_avx2(const float* x, float* out, int64_t n) {
  const __m256 one = _mm256_set1_ps(1.0f), minus = _mm256_set1_ps(-1.0f);
  map8(x, out, n, [&](__m256 v) { return _mm256_div_ps(one, _mm256_add_ps(one, exp_ps(_mm256_mul_ps(minus, v)))); });
}

void exp_avx2(const float* x, float* y, int64_t n) { map8(x, y, n, [](__m256 v) { return exp_ps(v); }); }

}  // namespace minnow::kernels
