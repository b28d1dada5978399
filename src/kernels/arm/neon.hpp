// Shared pieces of the baseline NEON kernels (armv8.0-a): an 8-lane float vector as two
// 4-lane halves, whose horizontal sum adds in the AVX2 kernels' order, so the NEON
// kernels reproduce the x86 ones' roundings; and the entry points of the element-wise and
// attention kernel files.
#pragma once
#include <arm_neon.h>

#include <cstdint>

#include "kernels/ops.hpp"
#include "tensor/fp16.hpp"

namespace minnow::kernels {

// Fill in the element-wise (kernels/arm/elementwise_neon.cpp) and attention
// (kernels/arm/attention_neon.cpp) entries of a NEON table.
void set_neon_elementwise(KernelTable& t);
void set_neon_attention(KernelTable& t);
// The convolution kernels (kernels/arm/sgemm_neon.cpp): sgemm, sgemm_rows, depthwise_row.
void set_neon_convolution(KernelTable& t);

namespace {

inline float half_to_float(uint16_t h) { return fp16_to_fp32(h); }
inline uint16_t float_to_half(float f) { return fp32_to_fp16(f); }

// Lanes 0-3 in lo, 4-7 in hi: one AVX2 register's worth.
struct F32x8 {
  float32x4_t lo, hi;

  static F32x8 zero() { return {vdupq_n_f32(0.0f), vdupq_n_f32(0.0f)}; }
  static F32x8 broadcast(float v) { return {vdupq_n_f32(v), vdupq_n_f32(v)}; }
  static F32x8 load(const float* p) { return {vld1q_f32(p), vld1q_f32(p + 4)}; }
  // 8 halves (IEEE binary16) widened exactly.
  static F32x8 load_half(const uint16_t* p) {
    const float16x8_t h = vreinterpretq_f16_u16(vld1q_u16(p));
    return {vcvt_f32_f16(vget_low_f16(h)), vcvt_high_f32_f16(h)};
  }
  void store(float* p) const {
    vst1q_f32(p, lo);
    vst1q_f32(p + 4, hi);
  }
  // Rounded to nearest even, as F16C's _mm256_cvtps_ph(.., _MM_FROUND_TO_NEAREST_INT).
  void store_half(uint16_t* p) const {
    vst1q_u16(p, vreinterpretq_u16_f16(vcombine_f16(vcvt_f16_f32(lo), vcvt_f16_f32(hi))));
  }
  // this + a * b, fused (as _mm256_fmadd_ps(a, b, this)).
  F32x8 fma(F32x8 a, F32x8 b) const { return {vfmaq_f32(lo, a.lo, b.lo), vfmaq_f32(hi, a.hi, b.hi)}; }
  F32x8 operator+(F32x8 o) const { return {vaddq_f32(lo, o.lo), vaddq_f32(hi, o.hi)}; }
  F32x8 operator-(F32x8 o) const { return {vsubq_f32(lo, o.lo), vsubq_f32(hi, o.hi)}; }
  F32x8 operator*(F32x8 o) const { return {vmulq_f32(lo, o.lo), vmulq_f32(hi, o.hi)}; }
  // The AVX2 horizontal sum's order: t = lo + hi, then (t0 + t2) + (t1 + t3).
  float hsum() const {
    const float32x4_t t = vaddq_f32(lo, hi);
    const float32x2_t u = vadd_f32(vget_low_f32(t), vget_high_f32(t));
    return vget_lane_f32(u, 0) + vget_lane_f32(u, 1);
  }
};

}  // namespace
}  // namespace minnow::kernels
