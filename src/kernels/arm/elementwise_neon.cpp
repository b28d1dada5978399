// NEON versions of the fused element-wise kernels, each the AVX2 one's arithmetic in its
// order (kernels/x86/elementwise_avx2.cpp): RMSNorm's double sum of squares in the same
// four 4-lane accumulators and horizontal sum, RoPE with the reference's separate
// multiplies and adds (bit for bit the reference), the GLU activations through the same
// exp (kernels/arm/exp_neon.hpp) and the same scalar tails.
#include <algorithm>
#include <cmath>

#include "kernels/arm/exp_neon.hpp"

namespace minnow::kernels {
namespace {

// Mirrors rmsnorm_avx2. Its four __m256d accumulators s0..s3 are here s[0..3] as pairs of
// float64x2_t (s[j][0]: lanes 0-1, s[j][1]: lanes 2-3), then its hsum of (s0 + s1) + (s2 + s3).
void rmsnorm_neon(const float* x, const float* w, float* y, int64_t rows, int64_t d, float eps) {
  for (int64_t r = 0; r < rows; ++r, x += d, y += d) {
    float64x2_t s[4][2];
    for (auto& a : s) a[0] = a[1] = vdupq_n_f64(0.0);
    int64_t i = 0;
    for (; i + 16 <= d; i += 16)
      for (int j = 0; j < 4; ++j) {
        const float32x4_t u = vld1q_f32(x + i + 4 * j);
        const float64x2_t u0 = vcvt_f64_f32(vget_low_f32(u)), u1 = vcvt_high_f64_f32(u);
        s[j][0] = vfmaq_f64(s[j][0], u0, u0);
        s[j][1] = vfmaq_f64(s[j][1], u1, u1);
      }
    float64x2_t t[2];
    for (int h = 0; h < 2; ++h) t[h] = vaddq_f64(vaddq_f64(s[0][h], s[1][h]), vaddq_f64(s[2][h], s[3][h]));
    const float64x2_t t2 = vaddq_f64(t[0], t[1]);
    double ss = vgetq_lane_f64(t2, 0) + vgetq_lane_f64(t2, 1);
    for (; i < d; ++i) ss += static_cast<double>(x[i]) * x[i];
    const float scale = 1.0f / std::sqrt(static_cast<float>(ss / static_cast<double>(d)) + eps);
    const F32x8 sc = F32x8::broadcast(scale);
    for (i = 0; i + 8 <= d; i += 8) (F32x8::load(x + i) * sc * F32x8::load(w + i)).store(y + i);
    for (; i < d; ++i) y[i] = x[i] * scale * w[i];
  }
}

// Rotated values to f32, or to f16 rounded to nearest even (as fp32_to_fp16 and AVX2's
// _mm256_cvtps_ph): 8 in a row, 4 pairs interleaved, or one.
inline void put8(float* p, F32x8 v) { v.store(p); }
inline void put8(uint16_t* p, F32x8 v) { v.store_half(p); }
inline void put_pairs(float* p, float32x4_t a, float32x4_t b) { vst2q_f32(p, (float32x4x2_t{a, b})); }
inline void put_pairs(uint16_t* p, float32x4_t a, float32x4_t b) {
  vst2_u16(p, (uint16x4x2_t{vreinterpret_u16_f16(vcvt_f16_f32(a)), vreinterpret_u16_f16(vcvt_f16_f32(b))}));
}
inline void put1(float* p, float v) { *p = v; }
inline void put1(uint16_t* p, float v) { *p = float_to_half(v); }

// Mirrors rotate_head (AVX2): one head from v to out (out may be v), (a, b) -> (a cos - b sin,
// a sin + b cos) with separate multiplies and adds as the reference rounds them, 8 values
// per step then the scalar pairs. Adjacent pairs are split by NEON's de-interleaving loads
// (vld2q / vst2) where AVX2 multiplies by its pair table: the same products and sums.
template <class Out>
void rotate_head(const float* v, int64_t head_dim, const float* cos, const float* sin, bool half_split, Out* out) {
  const int64_t half = head_dim / 2;
  int64_t i = 0;
  if (half_split) {
    for (; i + 8 <= half; i += 8) {
      const F32x8 a = F32x8::load(v + i), b = F32x8::load(v + half + i);
      const F32x8 c = F32x8::load(cos + i), s = F32x8::load(sin + i);
      put8(out + i, a * c - b * s);
      put8(out + half + i, a * s + b * c);
    }
    for (; i < half; ++i) {
      const float a = v[i], b = v[half + i];
      put1(out + i, a * cos[i] - b * sin[i]);
      put1(out + half + i, a * sin[i] + b * cos[i]);
    }
    return;
  }
  for (; i + 4 <= half; i += 4) {
    const float32x4x2_t ab = vld2q_f32(v + 2 * i);  // a0 a1 a2 a3, b0 b1 b2 b3
    const float32x4_t c = vld1q_f32(cos + i), s = vld1q_f32(sin + i);
    put_pairs(out + 2 * i, vsubq_f32(vmulq_f32(ab.val[0], c), vmulq_f32(ab.val[1], s)),
              vaddq_f32(vmulq_f32(ab.val[0], s), vmulq_f32(ab.val[1], c)));
  }
  for (; i < half; ++i) {
    const float a = v[2 * i], b = v[2 * i + 1];
    put1(out + 2 * i, a * cos[i] - b * sin[i]);
    put1(out + 2 * i + 1, a * sin[i] + b * cos[i]);
  }
}

// Mirrors rope_avx2.
void rope_neon(float* x, int64_t n_heads, int64_t head_dim, const float* cos, const float* sin, bool half_split) {
  for (int64_t h = 0; h < n_heads; ++h)
    rotate_head(x + h * head_dim, head_dim, cos, sin, half_split, x + h * head_dim);
}

// Mirrors rope_store_kv_f16_avx2.
void rope_store_kv_f16_neon(const float* k, const float* v, int64_t n_heads, int64_t head_dim, const float* cos,
                            const float* sin, bool half_split, uint16_t* k_out, uint16_t* v_out) {
  for (int64_t h = 0; h < n_heads; ++h)
    rotate_head(k + h * head_dim, head_dim, cos, sin, half_split, k_out + h * head_dim);
  const int64_t n = n_heads * head_dim;
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) F32x8::load(v + i).store_half(v_out + i);
  for (; i < n; ++i) v_out[i] = float_to_half(v[i]);
}

// Mirrors glu (AVX2): out = x / (1 + e^(-k z(x))) * up, 8 values per step (z(x) = x, k = 1:
// SiLU; z(x) = x + 0.044715 x^3, k = 2 sqrt(2/pi): tanh GELU), then the scalar formula.
template <bool kGelu>
void glu(const float* gate, const float* up, float* out, int64_t n, float (*scalar)(float)) {
  const F32x8 one = F32x8::broadcast(1.0f), cubic = F32x8::broadcast(0.044715f);
  const F32x8 minus_k = F32x8::broadcast(kGelu ? -1.5957691216057308f : -1.0f);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const F32x8 x = F32x8::load(gate + i);
    F32x8 z = x;
    if constexpr (kGelu) z = x + cubic * (x * x * x);
    const F32x8 den = one + exp_ps(minus_k * z);
    const F32x8 q{vdivq_f32(x.lo, den.lo), vdivq_f32(x.hi, den.hi)};
    (q * F32x8::load(up + i)).store(out + i);
  }
  for (; i < n; ++i) out[i] = scalar(gate[i]) * up[i];
}

// The scalar tails, as the AVX2 file writes them.
float silu(float x) { return x / (1.0f + std::exp(-x)); }
float gelu_tanh(float x) { return 0.5f * x * (1.0f + std::tanh(0.7978845608028654f * (x + 0.044715f * x * x * x))); }

void glu_silu_neon(const float* gate, const float* up, float* out, int64_t n) { glu<false>(gate, up, out, n, silu); }
void glu_gelu_tanh_neon(const float* gate, const float* up, float* out, int64_t n) {
  glu<true>(gate, up, out, n, gelu_tanh);
}

// Mirrors elementwise_avx2.cpp's map8: 8 values at a time, the last few through the same f,
// zero-padded.
template <class F>
void map8(const float* x, float* out, int64_t n, F f) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) f(F32x8::load(x + i)).store(out + i);
  if (i == n) return;
  float tail[8] = {};
  std::copy(x + i, x + n, tail);
  f(F32x8::load(tail)).store(tail);
  std::copy(tail, tail + (n - i), out + i);
}

}  // namespace

void exp_neon(const float* x, float* y, int64_t n) { map8(x, y, n, [](F32x8 v) { return exp_ps(v); }); }

// Mirrors sigmoid_avx2.
void sigmoid_neon(const float* x, float* out, int64_t n) {
  const F32x8 one = F32x8::broadcast(1.0f), minus = F32x8::broadcast(-1.0f);
  map8(x, out, n, [&](F32x8 v) {
    const F32x8 den = one + exp_ps(minus * v);
    return F32x8{vdivq_f32(one.lo, den.lo), vdivq_f32(one.hi, den.hi)};
  });
}

void set_neon_elementwise(KernelTable& t) {
  t.sigmoid = sigmoid_neon;
  t.rmsnorm = rmsnorm_neon;
  t.rope = rope_neon;
  t.rope_store_kv_f16 = rope_store_kv_f16_neon;
  t.glu_silu = glu_silu_neon;
  t.glu_gelu_tanh = glu_gelu_tanh_neon;
}

}  // namespace minnow::kernels
