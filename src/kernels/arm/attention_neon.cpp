// NEON attention kernels, each the AVX2 one's arithmetic in its order: softmax's exp_sum and
// the online-softmax tile step (kernels/x86/softmax.cpp, attention_avx2.cpp), and the
// grouped score / value kernels over f16 and Q8_0 caches (kernels/x86/avx2_kernels.cpp), so
// every (query, position) is computed as dot_row(F16) / axpy_f16 compute it.
#include <algorithm>
#include <cmath>
#include <type_traits>

#include "kernels/arm/exp_neon.hpp"

namespace minnow::kernels {
namespace {

// _mm_max_ps(a, b) lane by lane: a > b ? a : b (b when either is NaN, and for -0 vs +0).
inline float32x4_t max_ps(float32x4_t a, float32x4_t b) { return vbslq_f32(vcgtq_f32(a, b), a, b); }

// Mirrors exp_sum_avx2: one 8-lane sum, its 128-bit horizontal sum (F32x8::hsum's order),
// then the scalar tail with std::exp.
float exp_sum_neon(float* s, int64_t n, float shift) {
  const F32x8 sh = F32x8::broadcast(shift);
  F32x8 acc = F32x8::zero();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const F32x8 e = exp_ps(F32x8::load(s + i) - sh);
    e.store(s + i);
    acc = acc + e;
  }
  float sum = acc.hsum();
  for (; i < n; ++i) sum += (s[i] = std::exp(s[i] - shift));
  return sum;
}

// Mirrors scale_and_max (attention_avx2.cpp): s[i] *= scale in place; returns max(m, max of
// them), reduced as its hmax (halves, then lanes 0/2 and 1/3, then those two).
float scale_and_max(float* s, int64_t n, float scale, float m) {
  const F32x8 vs = F32x8::broadcast(scale);
  F32x8 vmax = F32x8::broadcast(m);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const F32x8 x = F32x8::load(s + i) * vs;
    x.store(s + i);
    vmax = {max_ps(vmax.lo, x.lo), max_ps(vmax.hi, x.hi)};
  }
  const float32x4_t h = max_ps(vmax.lo, vmax.hi);
  const float32x4_t u = max_ps(h, vcombine_f32(vget_high_f32(h), vget_high_f32(h)));
  const float u0 = vgetq_lane_f32(u, 0), u1 = vgetq_lane_f32(u, 1);
  float mx = u0 > u1 ? u0 : u1;
  for (; i < n; ++i) mx = std::max(mx, s[i] *= scale);
  return mx;
}

// Mirrors attn_softmax_tile_avx2 (soft-capping keeps the scalar tanh).
float attn_softmax_tile_neon(float* s, int64_t n, float scale, float cap, float* m, float* l) {
  float m_new;
  if (cap > 0) {
    m_new = *m;
    for (int64_t i = 0; i < n; ++i) m_new = std::max(m_new, s[i] = cap * std::tanh(s[i] * scale / cap));
  } else {
    m_new = scale_and_max(s, n, scale, *m);
  }
  const float factor = std::exp(*m - m_new);  // 0 on the first tile (m = -inf), 1 when the max held
  *l = *l * factor + exp_sum_neon(s, n, m_new);
  *m = m_new;
  return factor;
}

// Calls fn(std::integral_constant<int, NQ>) for nq (1..kMaxAttnQueries) query heads, so
// each attention kernel is compiled once per group size (as in avx2_kernels.cpp).
template <typename Fn>
inline void with_queries(int nq, Fn fn) {
  switch (nq) {
    case 1: return fn(std::integral_constant<int, 1>{});
    case 2: return fn(std::integral_constant<int, 2>{});
    case 3: return fn(std::integral_constant<int, 3>{});
    default: return fn(std::integral_constant<int, 4>{});
  }
}

// Mirrors scores_f16 (AVX2): per K row, its halves widened once per 8 values for up to 4
// queries; each dot is dot_f16_neon's sequence (one accumulator, hsum, scalar tail).
template <int NQ>
void scores_f16(const float* q, const uint16_t* k, int64_t stride, int64_t n, int64_t hd, float* s, int64_t s_stride) {
  const int64_t hd8 = hd & ~int64_t{7};
  for (int64_t p = 0; p < n; ++p) {
    const uint16_t* row = k + p * stride;
    F32x8 acc[NQ];
    for (int g = 0; g < NQ; ++g) acc[g] = F32x8::zero();
    for (int64_t i = 0; i < hd8; i += 8) {
      const F32x8 kv = F32x8::load_half(row + i);
      for (int g = 0; g < NQ; ++g) acc[g] = acc[g].fma(kv, F32x8::load(q + g * hd + i));
    }
    for (int g = 0; g < NQ; ++g) {
      float x = acc[g].hsum();
      for (int64_t i = hd8; i < hd; ++i) x += half_to_float(row[i]) * q[g * hd + i];
      s[g * s_stride + p] = x;
    }
  }
}

void attn_scores_f16_neon(const float* q, int nq, const uint16_t* k, int64_t stride, int64_t n, int64_t hd, float* s,
                          int64_t s_stride) {
  with_queries(nq, [&](auto g) { scores_f16<g.value>(q, k, stride, n, hd, s, s_stride); });
}

// y[i] += a * x[i] as axpy_f16_neon / axpy_f16_avx2 do it (8 fused, then the scalar tail).
void axpy_f16(float a, const uint16_t* x, float* y, int64_t n) {
  const F32x8 va = F32x8::broadcast(a);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) F32x8::load(y + i).fma(va, F32x8::load_half(x + i)).store(y + i);
  for (; i < n; ++i) y[i] += a * half_to_float(x[i]);
}

// The value kernels' shared loop (values_f16 / values_q8 in AVX2): sixteen output columns
// of up to 4 queries stay in registers over all positions, the FMAs of each column in
// position order (as axpy_f16 applies them); load(p, v0, v1) gives position p's 16 values.
template <int NQ, class Load>
inline void values16(const float* w, int64_t w_stride, int64_t n, int64_t hd, float* out, Load load) {
  F32x8 acc[NQ][2];
  for (int g = 0; g < NQ; ++g) acc[g][0] = F32x8::load(out + g * hd), acc[g][1] = F32x8::load(out + g * hd + 8);
  for (int64_t p = 0; p < n; ++p) {
    F32x8 v0, v1;
    load(p, &v0, &v1);
    for (int g = 0; g < NQ; ++g) {
      const F32x8 a = F32x8::broadcast(w[g * w_stride + p]);
      acc[g][0] = acc[g][0].fma(a, v0);
      acc[g][1] = acc[g][1].fma(a, v1);
    }
  }
  for (int g = 0; g < NQ; ++g) acc[g][0].store(out + g * hd), acc[g][1].store(out + g * hd + 8);
}

// Mirrors values_f16 (AVX2), the columns past the last 16 position by position as axpy_f16.
template <int NQ>
void values_f16(const float* w, int64_t w_stride, const uint16_t* v, int64_t stride, int64_t n, int64_t hd, float* out) {
  int64_t c = 0;
  for (; c + 16 <= hd; c += 16)
    values16<NQ>(w, w_stride, n, hd, out + c, [&](int64_t p, F32x8* v0, F32x8* v1) {
      *v0 = F32x8::load_half(v + p * stride + c);
      *v1 = F32x8::load_half(v + p * stride + c + 8);
    });
  if (c < hd)
    for (int64_t p = 0; p < n; ++p)
      for (int g = 0; g < NQ; ++g) axpy_f16(w[g * w_stride + p], v + p * stride + c, out + g * hd + c, hd - c);
}

void attn_values_f16_neon(const float* w, int nq, int64_t w_stride, const uint16_t* v, int64_t stride, int64_t n,
                          int64_t hd, float* out) {
  with_queries(nq, [&](auto g) { values_f16<g.value>(w, w_stride, v, stride, n, hd, out); });
}

// Mirrors q8_values (AVX2): 8 values of a Q8_0 block, dequantized (q * d, as the reference).
inline F32x8 q8_values(const uint8_t* qs, F32x8 d) {
  const int16x8_t q = vmovl_s8(vld1_s8(reinterpret_cast<const int8_t*>(qs)));
  return F32x8{vcvtq_f32_s32(vmovl_s16(vget_low_s16(q))), vcvtq_f32_s32(vmovl_high_s16(q))} * d;
}
// A Q8_0 block's scale (f16, little-endian) in every lane.
inline F32x8 q8_scale(const uint8_t* blk) {
  return F32x8::broadcast(half_to_float(static_cast<uint16_t>(blk[0] | blk[1] << 8)));
}

// Mirrors scores_q8 (AVX2): up to 4 queries per K row, each with one accumulator over the
// head's blocks in order, then hsum.
template <int NQ>
void scores_q8(const float* q, const uint8_t* k, int64_t stride, int64_t n, int64_t hd, float* s, int64_t s_stride) {
  for (int64_t p = 0; p < n; ++p) {
    const uint8_t* row = k + p * stride;
    F32x8 acc[NQ];
    for (int g = 0; g < NQ; ++g) acc[g] = F32x8::zero();
    for (int64_t b = 0; b < hd / 32; ++b) {
      const uint8_t* blk = row + b * 34;
      const F32x8 d = q8_scale(blk);
      for (int c = 0; c < 4; ++c) {
        const F32x8 kv = q8_values(blk + 2 + 8 * c, d);
        for (int g = 0; g < NQ; ++g) acc[g] = acc[g].fma(kv, F32x8::load(q + g * hd + 32 * b + 8 * c));
      }
    }
    for (int g = 0; g < NQ; ++g) s[g * s_stride + p] = acc[g].hsum();
  }
}

void attn_scores_q8_neon(const float* q, int nq, const uint8_t* k, int64_t stride, int64_t n, int64_t hd, float* s,
                         int64_t s_stride) {
  with_queries(nq, [&](auto g) { scores_q8<g.value>(q, k, stride, n, hd, s, s_stride); });
}

// Mirrors values_q8 (AVX2): sixteen columns (half a block) at a time.
template <int NQ>
void values_q8(const float* w, int64_t w_stride, const uint8_t* v, int64_t stride, int64_t n, int64_t hd, float* out) {
  for (int64_t c = 0; c < hd; c += 16) {
    const int64_t at = c / 32 * 34 + 2 + c % 32;  // the 16 values' bytes within a row
    values16<NQ>(w, w_stride, n, hd, out + c, [&](int64_t p, F32x8* v0, F32x8* v1) {
      const F32x8 d = q8_scale(v + p * stride + c / 32 * 34);
      *v0 = q8_values(v + p * stride + at, d);
      *v1 = q8_values(v + p * stride + at + 8, d);
    });
  }
}

void attn_values_q8_neon(const float* w, int nq, int64_t w_stride, const uint8_t* v, int64_t stride, int64_t n,
                         int64_t hd, float* out) {
  with_queries(nq, [&](auto g) { values_q8<g.value>(w, w_stride, v, stride, n, hd, out); });
}

}  // namespace

void set_neon_attention(KernelTable& t) {
  t.exp_sum = exp_sum_neon;
  t.attn_softmax_tile = attn_softmax_tile_neon;
  t.attn_scores_f16 = attn_scores_f16_neon;
  t.attn_values_f16 = attn_values_f16_neon;
  t.attn_scores_q8 = attn_scores_q8_neon;
  t.attn_values_q8 = attn_values_q8_neon;
}

}  // namespace minnow::kernels
