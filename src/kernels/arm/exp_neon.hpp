// The vectorized exp shared by the NEON kernels (softmax, SiLU, GELU): kernels/x86/exp.hpp's
// exp_ps step for step (same clamp, constants, rounding and fused multiply-adds), so it
// gives the AVX2 version's bits. Internal linkage in each including file.
#pragma once
#include "kernels/arm/neon.hpp"

namespace minnow::kernels {

// y[i] = e^x[i] by exp_ps below, a partial vector at the end included (exposed for its
// accuracy test; mirrors exp_avx2).
void exp_neon(const float* x, float* y, int64_t n);

namespace {

// Mirrors exp_ps (kernels/x86/exp.hpp): e^x = 2^n e^r, n = round(x / ln 2), r = x - n ln 2
// (two fused steps), e^r by Taylor to degree 7 (Horner, fused). vmaxnmq returns the number
// when x is a (quiet) NaN, as _mm256_max_ps(x, lo) does.
inline float32x4_t exp_ps(float32x4_t x) {
  x = vminq_f32(vmaxnmq_f32(x, vdupq_n_f32(-87.3f)), vdupq_n_f32(88.0f));
  const float32x4_t n = vrndnq_f32(vmulq_f32(x, vdupq_n_f32(1.44269504088896341f)));  // nearest even
  float32x4_t r = vfmsq_f32(x, n, vdupq_n_f32(0.693145751953125f));  // x - n * hi, one rounding
  r = vfmsq_f32(r, n, vdupq_n_f32(1.42860682030941723e-6f));
  float32x4_t p = vdupq_n_f32(1.0f / 5040);
  for (float c : {1.0f / 720, 1.0f / 120, 1.0f / 24, 1.0f / 6, 0.5f, 1.0f, 1.0f}) p = vfmaq_f32(vdupq_n_f32(c), p, r);
  const int32x4_t two_n = vshlq_n_s32(vaddq_s32(vcvtnq_s32_f32(n), vdupq_n_s32(127)), 23);
  return vmulq_f32(p, vreinterpretq_f32_s32(two_n));
}

inline F32x8 exp_ps(F32x8 x) { return {exp_ps(x.lo), exp_ps(x.hi)}; }

}  // namespace
}  // namespace minnow::kernels
