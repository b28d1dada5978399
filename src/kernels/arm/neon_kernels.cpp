// aarch64 NEON kernels (armv8.0-a: every 64-bit ARM CPU) and the three ARM tables. The f32
// reductions keep the AVX2 kernels' order exactly (8-lane accumulators as two 4-lane
// halves, summed as the x86 horizontal sum does), so a phone and an x86 laptop running
// SIMD kernels compute the same numbers; the packed kernels and the activation rounding
// equal the scalar reference bit for bit.
#include <arm_neon.h>

#include <cstring>

#include "kernels/arm/neon.hpp"
#include "kernels/arm/packed_neon.hpp"
#include "kernels/isa_tables.hpp"

namespace minnow::kernels {
namespace {

float dot_f32_neon(const float* a, const float* b, int64_t n) {
  F32x8 s0 = F32x8::zero(), s1 = s0, s2 = s0, s3 = s0;
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    s0 = s0.fma(F32x8::load(a + i), F32x8::load(b + i));
    s1 = s1.fma(F32x8::load(a + i + 8), F32x8::load(b + i + 8));
    s2 = s2.fma(F32x8::load(a + i + 16), F32x8::load(b + i + 16));
    s3 = s3.fma(F32x8::load(a + i + 24), F32x8::load(b + i + 24));
  }
  for (; i + 8 <= n; i += 8) s0 = s0.fma(F32x8::load(a + i), F32x8::load(b + i));
  float s = ((s0 + s1) + (s2 + s3)).hsum();
  for (; i < n; ++i) s += a[i] * b[i];
  return s;
}

// One 8-lane accumulator, horizontal sum, then the scalar tail: the order of every
// output of gemm_f32 (and of the AVX2 GEMM), wherever its token falls.
float dot_f32_tile_order(const float* w, const float* x, int64_t k) {
  const int64_t k8 = k & ~int64_t{7};
  F32x8 acc = F32x8::zero();
  for (int64_t i = 0; i < k8; i += 8) acc = acc.fma(F32x8::load(w + i), F32x8::load(x + i));
  float s = acc.hsum();
  for (int64_t i = k8; i < k; ++i) s += w[i] * x[i];
  return s;
}

// 4 weight rows x 2 tokens per step: 16 accumulator registers, 12 loads per 16 FMAs.
void gemm_f32_neon(const float* w, int64_t rows, const float* x, int64_t n_tokens, int64_t k, float* y, int64_t ldy) {
  constexpr int kR = 4, kT = 2;
  const int64_t k8 = k & ~int64_t{7};
  int64_t t = 0;
  for (; t + kT <= n_tokens; t += kT) {
    int64_t r = 0;
    for (; r + kR <= rows; r += kR) {
      F32x8 acc[kR][kT];
      for (auto& row : acc)
        for (auto& a : row) a = F32x8::zero();
      for (int64_t i = 0; i < k8; i += 8) {
        F32x8 xv[kT];
        for (int tt = 0; tt < kT; ++tt) xv[tt] = F32x8::load(x + (t + tt) * k + i);
        for (int rr = 0; rr < kR; ++rr) {
          const F32x8 wv = F32x8::load(w + (r + rr) * k + i);
          for (int tt = 0; tt < kT; ++tt) acc[rr][tt] = acc[rr][tt].fma(wv, xv[tt]);
        }
      }
      for (int rr = 0; rr < kR; ++rr)
        for (int tt = 0; tt < kT; ++tt) {
          float s = acc[rr][tt].hsum();
          for (int64_t i = k8; i < k; ++i) s += w[(r + rr) * k + i] * x[(t + tt) * k + i];
          y[(t + tt) * ldy + r + rr] = s;
        }
    }
    for (; r < rows; ++r)
      for (int tt = 0; tt < kT; ++tt) y[(t + tt) * ldy + r] = dot_f32_tile_order(w + r * k, x + (t + tt) * k, k);
  }
  for (; t < n_tokens; ++t)
    for (int64_t r = 0; r < rows; ++r) y[t * ldy + r] = dot_f32_tile_order(w + r * k, x + t * k, k);
}

float dot_f16_neon(const void* row, const float* x, int64_t k) {
  auto* h = static_cast<const uint16_t*>(row);
  F32x8 acc = F32x8::zero();
  int64_t i = 0;
  for (; i + 8 <= k; i += 8) acc = acc.fma(F32x8::load_half(h + i), F32x8::load(x + i));
  float s = acc.hsum();
  for (; i < k; ++i) s += half_to_float(h[i]) * x[i];
  return s;
}

void axpy_f16_neon(float a, const uint16_t* x, float* y, int64_t n) {
  const F32x8 va = F32x8::broadcast(a);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) F32x8::load(y + i).fma(va, F32x8::load_half(x + i)).store(y + i);
  for (; i < n; ++i) y[i] += a * half_to_float(x[i]);
}

void f16_to_f32_neon(const uint16_t* src, float* dst, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) F32x8::load_half(src + i).store(dst + i);
  for (; i < n; ++i) dst[i] = half_to_float(src[i]);
}

void f32_to_f16_neon(const float* src, uint16_t* dst, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) F32x8::load(src + i).store_half(dst + i);
  for (; i < n; ++i) dst[i] = float_to_half(src[i]);
}

// Rounds 32 values to integers of at most kLimit: quantize_q8 / quantize_q15's arithmetic
// (the same max, scale, product and round-to-nearest-even), 8 x 4 int32 out, with their
// sum; returns the scale.
template <int kLimit>
inline float round_block(const float* x, int32x4_t q[8], int32_t* sum) {
  float32x4_t v[8], amax = vdupq_n_f32(0.0f);
  for (int i = 0; i < 8; ++i) {
    v[i] = vld1q_f32(x + 4 * i);
    amax = vmaxq_f32(amax, vabsq_f32(v[i]));
  }
  const float d = vmaxvq_f32(amax) / static_cast<float>(kLimit), inv = d > 0 ? 1.0f / d : 0.0f;
  const int32x4_t lo = vdupq_n_s32(-kLimit), hi = vdupq_n_s32(kLimit);
  int32x4_t total = vdupq_n_s32(0);
  for (int i = 0; i < 8; ++i) {
    q[i] = vminq_s32(vmaxq_s32(vcvtnq_s32_f32(vmulq_n_f32(v[i], inv)), lo), hi);
    total = vaddq_s32(total, q[i]);
  }
  *sum = vaddvq_s32(total);
  return d;
}

// 8 x 4 int32 (each in -128..127) -> 32 int8 in order.
inline void store_bytes(const int32x4_t q[8], int8_t* out) {
  for (int i = 0; i < 2; ++i) {
    const int16x8_t a = vcombine_s16(vmovn_s32(q[4 * i]), vmovn_s32(q[4 * i + 1]));
    const int16x8_t b = vcombine_s16(vmovn_s32(q[4 * i + 2]), vmovn_s32(q[4 * i + 3]));
    vst1q_s8(out + 16 * i, vcombine_s8(vmovn_s16(a), vmovn_s16(b)));
  }
}

void quantize_q8_neon(const float* x, int64_t k, Q8Block* out) {
  for (int64_t i = 0; i < k / 32; ++i, x += 32) {
    int32x4_t q[8];
    int32_t sum;
    out[i].d = round_block<127>(x, q, &sum);
    out[i].s = out[i].d * static_cast<float>(sum);
    store_bytes(q, out[i].q);
  }
}

void quantize_q15_neon(const float* x, int64_t k, Q15Block* out) {
  const int32x4_t low7 = vdupq_n_s32(127);
  for (int64_t i = 0; i < k / 32; ++i, x += 32) {
    int32x4_t q[8], hi[8], lo[8];
    int32_t sum;
    out[i].d = round_block<16256>(x, q, &sum);
    out[i].s = out[i].d * static_cast<float>(sum);
    for (int j = 0; j < 8; ++j) {
      hi[j] = vshrq_n_s32(q[j], 7);  // arithmetic: floor(q / 128)
      lo[j] = vandq_s32(q[j], low7);
    }
    store_bytes(hi, out[i].hi);
    store_bytes(lo, out[i].lo);
  }
}

// The scalar table with every entry NEON has replaced; the packed kernels of one level.
#define MINNOW_SET_PACKED(t, isa)            \
  t.packed_q4_0 = packed_q4_0_##isa;         \
  t.packed_q4_1 = packed_q4_1_##isa;         \
  t.packed_q5_0 = packed_q5_0_##isa;         \
  t.packed_q5_1 = packed_q5_1_##isa;         \
  t.packed_q8_0 = packed_q8_0_##isa;         \
  t.packed_q4_k = packed_q4_k_##isa;         \
  t.packed_q5_k = packed_q5_k_##isa;         \
  t.packed_q6_k = packed_q6_k_##isa;         \
  t.packed15_q4_0 = packed15_q4_0_##isa;     \
  t.packed15_q4_1 = packed15_q4_1_##isa;     \
  t.packed15_q5_0 = packed15_q5_0_##isa;     \
  t.packed15_q5_1 = packed15_q5_1_##isa;     \
  t.packed15_q8_0 = packed15_q8_0_##isa;     \
  t.packed15_q4_k = packed15_q4_k_##isa;     \
  t.packed15_q5_k = packed15_q5_k_##isa;     \
  t.packed15_q6_k = packed15_q6_k_##isa

KernelTable make_neon() {
  KernelTable t = ref_kernels();
  t.name = "neon";
  t.dot_f32 = dot_f32_neon;
  t.gemm_f32 = gemm_f32_neon;
  t.f16 = dot_f16_neon;
  t.f16_to_f32 = f16_to_f32_neon;
  t.f32_to_f16 = f32_to_f16_neon;
  t.axpy_f16 = axpy_f16_neon;
  t.to_q8 = quantize_q8_neon;
  t.to_q15 = quantize_q15_neon;
  set_neon_elementwise(t);
  set_neon_attention(t);
  set_neon_convolution(t);
  MINNOW_SET_PACKED(t, neon);
  return t;
}

}  // namespace

const KernelTable& neon_kernels() {
  static const KernelTable t = make_neon();
  return t;
}

const KernelTable& neon_dotprod_kernels() {
  static const KernelTable t = [] {
    KernelTable k = neon_kernels();
    k.name = "neon+dotprod";
    MINNOW_SET_PACKED(k, dotprod);
    return k;
  }();
  return t;
}

const KernelTable& neon_i8mm_kernels() {
  static const KernelTable t = [] {
    KernelTable k = neon_kernels();
    k.name = "neon+i8mm";
    MINNOW_SET_PACKED(k, i8mm);
    return k;
  }();
  return t;
}

}  // namespace minnow::kernels
