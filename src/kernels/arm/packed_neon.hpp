// Kernels over packed rows (kernels/packed.hpp) for aarch64, written once for three ways
// of making the integer block sums: packed_neon.cpp (armv8.0 widening multiplies),
// packed_dotprod.cpp (sdot) and packed_i8mm.cpp (smmla for pairs of tokens, sdot for a
// lone one). Everything here has internal linkage, so each file gets its own copy compiled
// for its own instruction set and no baseline caller can reach a newer instruction.
//
// The packed layout suits 128-bit vectors as is: a 32-byte chunk j holds 4 bytes of each
// of 8 rows, so its first 16 bytes are rows 0-3 and the rest rows 4-7, one row per 32-bit
// lane; they meet activation bytes 4j..4j+3 in every lane. The float steps are those of
// the scalar reference in the same order (fused multiply-adds where it uses std::fma),
// so results equal it bit for bit.
#pragma once
#include <arm_neon.h>

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <utility>

#include "kernels/ops.hpp"

namespace minnow::kernels {

#define MINNOW_PACKED_KERNELS(isa)                                                                          \
  void packed_q4_0_##isa(const uint8_t* group, const Q8Block* x, int64_t nb, int n_tokens, float* out);    \
  void packed_q4_1_##isa(const uint8_t* group, const Q8Block* x, int64_t nb, int n_tokens, float* out);    \
  void packed_q5_0_##isa(const uint8_t* group, const Q8Block* x, int64_t nb, int n_tokens, float* out);    \
  void packed_q5_1_##isa(const uint8_t* group, const Q8Block* x, int64_t nb, int n_tokens, float* out);    \
  void packed_q8_0_##isa(const uint8_t* group, const Q8Block* x, int64_t nb, int n_tokens, float* out);    \
  void packed_q4_k_##isa(const uint8_t* group, const Q8Block* x, int64_t nb, int n_tokens, float* out);    \
  void packed_q5_k_##isa(const uint8_t* group, const Q8Block* x, int64_t nb, int n_tokens, float* out);    \
  void packed_q6_k_##isa(const uint8_t* group, const Q8Block* x, int64_t nb, int n_tokens, float* out);    \
  void packed15_q4_0_##isa(const uint8_t* group, const Q15Block* x, int64_t nb, int n_tokens, float* out); \
  void packed15_q4_1_##isa(const uint8_t* group, const Q15Block* x, int64_t nb, int n_tokens, float* out); \
  void packed15_q5_0_##isa(const uint8_t* group, const Q15Block* x, int64_t nb, int n_tokens, float* out); \
  void packed15_q5_1_##isa(const uint8_t* group, const Q15Block* x, int64_t nb, int n_tokens, float* out); \
  void packed15_q8_0_##isa(const uint8_t* group, const Q15Block* x, int64_t nb, int n_tokens, float* out); \
  void packed15_q4_k_##isa(const uint8_t* group, const Q15Block* x, int64_t nb, int n_tokens, float* out); \
  void packed15_q5_k_##isa(const uint8_t* group, const Q15Block* x, int64_t nb, int n_tokens, float* out); \
  void packed15_q6_k_##isa(const uint8_t* group, const Q15Block* x, int64_t nb, int n_tokens, float* out);
MINNOW_PACKED_KERNELS(neon)
MINNOW_PACKED_KERNELS(dotprod)
MINNOW_PACKED_KERNELS(i8mm)
#undef MINNOW_PACKED_KERNELS

namespace {

// GCC does not inline these helpers on its own (they take the Weights by reference), and
// then every block's weights go through the stack: forced inline, the 16 weight vectors
// stay in registers (3x fewer instructions per block under dotprod).
#define MINNOW_INLINE [[gnu::always_inline]] inline
#define MINNOW_INLINE_LAMBDA __attribute__((always_inline))

// Decode streams every weight once: ask for the bytes 4 KiB ahead (the rest of this group
// and the start of the next, which follows in memory), as the x86 kernels do.
constexpr size_t kPrefetchAhead = 4096;
template <size_t kBytes>
MINNOW_INLINE void prefetch_block(const uint8_t* g) {
  for (size_t l = 0; l < kBytes; l += 64) __builtin_prefetch(g + kPrefetchAhead + l);
}

// One block's weights as signed bytes: chunk j (0..7) for rows 0-3 (lo) and 4-7 (hi); it
// meets activation bytes 4j..4j+3.
struct Weights {
  int8x16_t lo[8], hi[8];
};

// Row sums of one block: rows 0-3 and 4-7, one per lane.
struct RowSums {
  int32x4_t lo, hi;
};

// Unsigned nibbles of 4 packed chunks (j and j + 4 share a byte).
MINNOW_INLINE void unpack_nibbles(const uint8_t* q, Weights& w) {
  const uint8x16_t low4 = vdupq_n_u8(0x0f);
  for (int i = 0; i < 4; ++i) {
    const uint8x16_t a = vld1q_u8(q + 32 * i), b = vld1q_u8(q + 32 * i + 16);
    w.lo[i] = vreinterpretq_s8_u8(vandq_u8(a, low4));
    w.hi[i] = vreinterpretq_s8_u8(vandq_u8(b, low4));
    w.lo[i + 4] = vreinterpretq_s8_u8(vshrq_n_u8(a, 4));
    w.hi[i + 4] = vreinterpretq_s8_u8(vshrq_n_u8(b, 4));
  }
}

// ORs `value` into each element whose bit is set in a 32-byte plane of fifth (or sixth)
// bits (packed.hpp: byte (r/4)*16 + (r%4)*4 + i holds row r's bits of elements 4i+e (bit
// e) and 16+4i+e (bit 4+e)). A table lookup hands every lane its row's byte; a test
// against 1 << e (or 16 << e) picks the element's bit.
MINNOW_INLINE void add_high_bits(const uint8_t* plane, Weights& w, uint8_t value) {
  static const uint8_t kSpread[16] = {0, 0, 0, 0, 4, 4, 4, 4, 8, 8, 8, 8, 12, 12, 12, 12};
  static const uint8_t kLowBits[16] = {1, 2, 4, 8, 1, 2, 4, 8, 1, 2, 4, 8, 1, 2, 4, 8};
  const uint8x16_t spread = vld1q_u8(kSpread), low_bits = vld1q_u8(kLowBits), high_bits = vshlq_n_u8(low_bits, 4);
  const uint8x16_t v = vdupq_n_u8(value);
  const uint8x16_t rows_lo = vld1q_u8(plane), rows_hi = vld1q_u8(plane + 16);
  for (int i = 0; i < 4; ++i) {
    const uint8x16_t idx = vaddq_u8(spread, vdupq_n_u8(static_cast<uint8_t>(i)));
    const uint8x16_t a = vqtbl1q_u8(rows_lo, idx), b = vqtbl1q_u8(rows_hi, idx);
    w.lo[i] = vorrq_s8(w.lo[i], vreinterpretq_s8_u8(vandq_u8(vtstq_u8(a, low_bits), v)));
    w.hi[i] = vorrq_s8(w.hi[i], vreinterpretq_s8_u8(vandq_u8(vtstq_u8(b, low_bits), v)));
    w.lo[i + 4] = vorrq_s8(w.lo[i + 4], vreinterpretq_s8_u8(vandq_u8(vtstq_u8(a, high_bits), v)));
    w.hi[i + 4] = vorrq_s8(w.hi[i + 4], vreinterpretq_s8_u8(vandq_u8(vtstq_u8(b, high_bits), v)));
  }
}

// IntDot (one per instruction set) turns weights and 32 activation bytes into row sums:
//   dot<kFirst, kCount, kChain>(w, q): chunks kFirst..kFirst+kCount-1, where kChain
//   products of |w| * |q| fit an int16 (the baseline's widening multiplies use it);
//   dot_onto<...>(init, w, q): init + dot(w, q) (sdot accumulates onto init directly).
// How an activation block meets the weights: int8 in one pass; 15-bit as
// 128 * (w . hi) + (w . lo), exact in int32.
struct Int8Activations {
  using Block = Q8Block;
  template <typename IntDot, int kFirst, int kCount, int kChain>
  MINNOW_INLINE static RowSums dot(const Weights& w, const Block& x) {
    return IntDot::template dot<kFirst, kCount, kChain>(w, x.q);
  }
};

struct Split15Activations {
  using Block = Q15Block;
  template <typename IntDot, int kFirst, int kCount, int kChain>
  MINNOW_INLINE static RowSums dot(const Weights& w, const Block& x) {
    const RowSums h = IntDot::template dot<kFirst, kCount, kChain>(w, x.hi);
    return IntDot::template dot_onto<kFirst, kCount, kChain>({vshlq_n_s32(h.lo, 7), vshlq_n_s32(h.hi, 7)}, w, x.lo);
  }
};

// Activation bytes 4j..4j+3 in every lane.
MINNOW_INLINE int8x16_t broadcast4(const int8_t* q, int j) {
  int32_t v;
  std::memcpy(&v, q + 4 * j, 4);
  return vreinterpretq_s8_s32(vdupq_n_s32(v));
}

// armv8.0: widening multiplies into int16 lanes (row r, element e), kChain chunks summed
// there before they are widened pairwise into int32; the pairs are added at the end.
struct WideningDot {
  template <int kFirst, int kCount, int kChain>
  MINNOW_INLINE static RowSums dot(const Weights& w, const int8_t* q) {
    int32x4_t a0 = vdupq_n_s32(0), a1 = a0, b0 = a0, b1 = a0;  // rows 0-1, 2-3, 4-5, 6-7 (pairs of elements)
    for (int c = kFirst; c < kFirst + kCount; c += kChain) {
      int8x16_t x = broadcast4(q, c);
      int16x8_t p0 = vmull_s8(vget_low_s8(w.lo[c]), vget_low_s8(x)), p1 = vmull_high_s8(w.lo[c], x);
      int16x8_t p2 = vmull_s8(vget_low_s8(w.hi[c]), vget_low_s8(x)), p3 = vmull_high_s8(w.hi[c], x);
      for (int j = c + 1; j < c + kChain; ++j) {
        x = broadcast4(q, j);
        p0 = vmlal_s8(p0, vget_low_s8(w.lo[j]), vget_low_s8(x));
        p1 = vmlal_high_s8(p1, w.lo[j], x);
        p2 = vmlal_s8(p2, vget_low_s8(w.hi[j]), vget_low_s8(x));
        p3 = vmlal_high_s8(p3, w.hi[j], x);
      }
      a0 = vpadalq_s16(a0, p0);
      a1 = vpadalq_s16(a1, p1);
      b0 = vpadalq_s16(b0, p2);
      b1 = vpadalq_s16(b1, p3);
    }
    return {vpaddq_s32(a0, a1), vpaddq_s32(b0, b1)};
  }
  template <int kFirst, int kCount, int kChain>
  MINNOW_INLINE static RowSums dot_onto(RowSums init, const Weights& w, const int8_t* q) {
    const RowSums s = dot<kFirst, kCount, kChain>(w, q);
    return {vaddq_s32(init.lo, s.lo), vaddq_s32(init.hi, s.hi)};
  }
};

// An IntDot that computes each token alone: for_token_pairs(w, x, nb, fn) calls
// fn(t, sums) for every token t (x[t * nb]) in order.
template <typename Dot>
struct OneTokenAtATime : Dot {
  template <typename Act, int kFirst, int kCount, int kChain, int NT, typename Fn>
  MINNOW_INLINE static void for_token_pairs(const Weights& w, const typename Act::Block* x, int64_t nb, Fn fn) {
    for (int t = 0; t < NT; ++t) fn(t, Act::template dot<Dot, kFirst, kCount, kChain>(w, x[t * nb]));
  }
};

#if defined(__ARM_FEATURE_DOTPROD)
// armv8.2 dotprod: one sdot per chunk and half, the activation bytes taken by lane.
struct SdotDot {
  template <int kFirst, int kCount, int kChain>
  MINNOW_INLINE static RowSums dot(const Weights& w, const int8_t* q) {
    return dot_onto<kFirst, kCount, kChain>({vdupq_n_s32(0), vdupq_n_s32(0)}, w, q);
  }
  template <int kFirst, int kCount, int kChain>
  MINNOW_INLINE static RowSums dot_onto(RowSums s, const Weights& w, const int8_t* q) {
    const int8x16_t xa = vld1q_s8(q), xb = vld1q_s8(q + 16);
    [&]<int... I>(std::integer_sequence<int, I...>) {
      (step<kFirst + I>(s, w, xa, xb), ...);
    }(std::make_integer_sequence<int, kCount>{});
    return s;
  }
  template <int c>
  MINNOW_INLINE static void step(RowSums& s, const Weights& w, int8x16_t xa, int8x16_t xb) {
    const int8x16_t x = c < 4 ? xa : xb;
    s.lo = vdotq_laneq_s32(s.lo, w.lo[c], x, c % 4);
    s.hi = vdotq_laneq_s32(s.hi, w.hi[c], x, c % 4);
  }
};
#endif

#if defined(__ARM_FEATURE_MATMUL_INT8)
// armv8.6 i8mm: smmla multiplies a 2x8 by an 8x2 int8 matrix. Zipping chunks c and c+1
// gives rows (0,1), (2,3), (4,5), (6,7) as 2x8 matrices of 8 consecutive elements; two
// columns of activation bytes 4c..4c+7 side by side are the 8x2: two tokens' int8 bytes,
// or one token's 15-bit halves (hi, lo), so a 15-bit token costs what an int8 pair does.
// A result holds [r.a, r.b, (r+1).a, (r+1).b]; unzipping two gives each column's 4 rows.
struct MmlaDot : SdotDot {
  template <int kFirst, int kCount>
  struct RowPairs {
    int8x16_t m[kCount / 2][4];
    MINNOW_INLINE explicit RowPairs(const Weights& w) {
      for (int p = 0; p < kCount / 2; ++p) {
        const int c = kFirst + 2 * p;
        const int32x4_t lo0 = vreinterpretq_s32_s8(w.lo[c]), lo1 = vreinterpretq_s32_s8(w.lo[c + 1]);
        const int32x4_t hi0 = vreinterpretq_s32_s8(w.hi[c]), hi1 = vreinterpretq_s32_s8(w.hi[c + 1]);
        m[p][0] = vreinterpretq_s8_s32(vzip1q_s32(lo0, lo1));
        m[p][1] = vreinterpretq_s8_s32(vzip2q_s32(lo0, lo1));
        m[p][2] = vreinterpretq_s8_s32(vzip1q_s32(hi0, hi1));
        m[p][3] = vreinterpretq_s8_s32(vzip2q_s32(hi0, hi1));
      }
    }
    // Row sums against two columns of activation bytes, qa and qb.
    MINNOW_INLINE void dot2(const int8_t* qa, const int8_t* qb, RowSums& a, RowSums& b) const {
      int32x4_t r01 = vdupq_n_s32(0), r23 = r01, r45 = r01, r67 = r01;
      for (int p = 0; p < kCount / 2; ++p) {
        const int c = kFirst + 2 * p;
        const int8x16_t x = vcombine_s8(vld1_s8(qa + 4 * c), vld1_s8(qb + 4 * c));
        r01 = vmmlaq_s32(r01, m[p][0], x);
        r23 = vmmlaq_s32(r23, m[p][1], x);
        r45 = vmmlaq_s32(r45, m[p][2], x);
        r67 = vmmlaq_s32(r67, m[p][3], x);
      }
      a = {vuzp1q_s32(r01, r23), vuzp1q_s32(r45, r67)};
      b = {vuzp2q_s32(r01, r23), vuzp2q_s32(r45, r67)};
    }
  };

  template <typename Act, int kFirst, int kCount, int kChain, int NT, typename Fn>
  MINNOW_INLINE static void for_token_pairs(const Weights& w, const typename Act::Block* x, int64_t nb, Fn fn) {
    if constexpr (NT == 1) {
      // A lone token (decode): zipping the rows for smmla costs more than it saves.
      fn(0, Act::template dot<SdotDot, kFirst, kCount, kChain>(w, x[0]));
      return;
    }
    const RowPairs<kFirst, kCount> rows(w);
    if constexpr (std::is_same_v<typename Act::Block, Q15Block>) {
      for (int t = 0; t < NT; ++t) {
        RowSums h, l;
        rows.dot2(x[t * nb].hi, x[t * nb].lo, h, l);
        fn(t, RowSums{vmlaq_n_s32(l.lo, h.lo, 128), vmlaq_n_s32(l.hi, h.hi, 128)});
      }
    } else {
      for (int t = 0; t + 1 < NT; t += 2) {
        RowSums a, b;
        rows.dot2(x[t * nb].q, x[(t + 1) * nb].q, a, b);
        fn(t, a);
        fn(t + 1, b);
      }
      if constexpr (NT % 2 == 1) fn(NT - 1, Act::template dot<SdotDot, kFirst, kCount, kChain>(w, x[(NT - 1) * nb]));
    }
  }
};
#endif

// One block's row minimums: stored (Q4_1, Q5_1) or the offset times the row scales d.
template <bool kMin, bool k5>
MINNOW_INLINE void q4_block_minimums(const uint8_t* g, const float32x4_t d[2], float32x4_t m[2]) {
  if constexpr (kMin) {
    const float16x8_t mh = vreinterpretq_f16_u8(vld1q_u8(g + 16));
    m[0] = vcvt_f32_f16(vget_low_f16(mh));
    m[1] = vcvt_high_f32_f16(mh);
  } else {
    m[0] = vmulq_n_f32(d[0], k5 ? -16.0f : -8.0f);
    m[1] = vmulq_n_f32(d[1], k5 ? -16.0f : -8.0f);
  }
}

// The minimum (or offset) terms of q4_group, accm[t] += m * x.s block by block: they need
// no weights, so with several tokens they run as a pass of their own after the integer
// sums (same operations, same order). The main loop then holds 8 float accumulators for
// 4 tokens instead of 16 beside the 16 weight vectors: fewer spills (Q4_0, 4 tokens,
// 15-bit, sdot: 76 -> 68 instructions per block and token).
template <typename Block, bool kMin, bool k5, size_t kBytes, int NT>
MINNOW_INLINE void q4_minimums(const uint8_t* g, const Block* x, int64_t nb, float32x4_t (&accm)[NT][2]) {
  for (int64_t b = 0; b < nb; ++b, g += kBytes) {
    const float16x8_t dh = vreinterpretq_f16_u8(vld1q_u8(g));
    const float32x4_t d[2] = {vcvt_f32_f16(vget_low_f16(dh)), vcvt_high_f32_f16(dh)};
    float32x4_t m[2];
    q4_block_minimums<kMin, k5>(g, d, m);
    for (int t = 0; t < NT; ++t) {
      const float s = x[t * nb + b].s;
      accm[t][0] = vfmaq_n_f32(accm[t][0], m[0], s);
      accm[t][1] = vfmaq_n_f32(accm[t][1], m[1], s);
    }
  }
}

// Q4_0/Q4_1/Q5_0/Q5_1 rows: nibbles (plus fifth bits), row scales, minimums (or the
// format's offset times the scale). Weights are at most 31: 8 products fit an int16.
template <typename IntDot, typename Act, DType T, int NT>
inline void q4_group(const uint8_t* g0, const typename Act::Block* x, int64_t nb, float* out) {
  constexpr bool kMin = T == DType::Q4_1 || T == DType::Q5_1, k5 = T == DType::Q5_0 || T == DType::Q5_1;
  constexpr size_t kHighAt = kMin ? 32 : 16, kQuantsAt = kHighAt + (k5 ? 32 : 0), kBytes = kQuantsAt + 128;
  constexpr bool kMinimumsApart = NT > 1;
  float32x4_t acc[NT][2], accm[NT][2];
  for (int t = 0; t < NT; ++t) acc[t][0] = acc[t][1] = accm[t][0] = accm[t][1] = vdupq_n_f32(0.0f);
  const uint8_t* g = g0;
  for (int64_t b = 0; b < nb; ++b, g += kBytes) {
    prefetch_block<kBytes>(g);
    const float16x8_t dh = vreinterpretq_f16_u8(vld1q_u8(g));
    const float32x4_t d[2] = {vcvt_f32_f16(vget_low_f16(dh)), vcvt_high_f32_f16(dh)};
    float32x4_t m[2] = {};
    if constexpr (!kMinimumsApart) q4_block_minimums<kMin, k5>(g, d, m);
    Weights w;
    unpack_nibbles(g + kQuantsAt, w);
    if constexpr (k5) add_high_bits(g + kHighAt, w, 16);
    IntDot::template for_token_pairs<Act, 0, 8, 8, NT>(w, x + b, nb, [&](int t, RowSums sum) MINNOW_INLINE_LAMBDA {
      const auto& xb = x[t * nb + b];
      acc[t][0] = vfmaq_f32(acc[t][0], vmulq_n_f32(d[0], xb.d), vcvtq_f32_s32(sum.lo));
      acc[t][1] = vfmaq_f32(acc[t][1], vmulq_n_f32(d[1], xb.d), vcvtq_f32_s32(sum.hi));
      if constexpr (!kMinimumsApart) {
        accm[t][0] = vfmaq_n_f32(accm[t][0], m[0], xb.s);
        accm[t][1] = vfmaq_n_f32(accm[t][1], m[1], xb.s);
      }
    });
  }
  if constexpr (kMinimumsApart) q4_minimums<typename Act::Block, kMin, k5, kBytes, NT>(g0, x, nb, accm);
  for (int t = 0; t < NT; ++t) {
    vst1q_f32(out + 8 * t, vaddq_f32(acc[t][0], accm[t][0]));
    vst1q_f32(out + 8 * t + 4, vaddq_f32(acc[t][1], accm[t][1]));
  }
}

// Q8_0 rows: signed bytes; |w| <= 128 and |x| <= 127, so 2 products fit an int16.
template <typename IntDot, typename Act, int NT>
inline void q8_group(const uint8_t* g, const typename Act::Block* x, int64_t nb, float* out) {
  constexpr size_t kBytes = 16 + 256;
  float32x4_t acc[NT][2];
  for (int t = 0; t < NT; ++t) acc[t][0] = acc[t][1] = vdupq_n_f32(0.0f);
  for (int64_t b = 0; b < nb; ++b, g += kBytes) {
    prefetch_block<kBytes>(g);
    const float16x8_t dh = vreinterpretq_f16_u8(vld1q_u8(g));
    const float32x4_t d[2] = {vcvt_f32_f16(vget_low_f16(dh)), vcvt_high_f32_f16(dh)};
    Weights w;
    for (int j = 0; j < 8; ++j) {
      w.lo[j] = vld1q_s8(reinterpret_cast<const int8_t*>(g + 16 + 32 * j));
      w.hi[j] = vld1q_s8(reinterpret_cast<const int8_t*>(g + 16 + 32 * j + 16));
    }
    IntDot::template for_token_pairs<Act, 0, 8, 2, NT>(w, x + b, nb, [&](int t, RowSums sum) MINNOW_INLINE_LAMBDA {
      const auto& xb = x[t * nb + b];
      acc[t][0] = vfmaq_f32(acc[t][0], vmulq_n_f32(d[0], xb.d), vcvtq_f32_s32(sum.lo));
      acc[t][1] = vfmaq_f32(acc[t][1], vmulq_n_f32(d[1], xb.d), vcvtq_f32_s32(sum.hi));
    });
  }
  for (int t = 0; t < NT; ++t) {
    vst1q_f32(out + 8 * t, acc[t][0]);
    vst1q_f32(out + 8 * t + 4, acc[t][1]);
  }
}

// 8 small scales of one sub-block (u8, or i8 for Q6_K) as floats, rows 0-3 and 4-7.
MINNOW_INLINE void scales_u8(const uint8_t* p, float32x4_t s[2]) {
  const uint16x8_t v = vmovl_u8(vld1_u8(p));
  s[0] = vcvtq_f32_u32(vmovl_u16(vget_low_u16(v)));
  s[1] = vcvtq_f32_u32(vmovl_high_u16(v));
}
MINNOW_INLINE void scales_i8(const uint8_t* p, float32x4_t s[2]) {
  const int16x8_t v = vmovl_s8(vld1_s8(reinterpret_cast<const int8_t*>(p)));
  s[0] = vcvtq_f32_s32(vmovl_s16(vget_low_s16(v)));
  s[1] = vcvtq_f32_s32(vmovl_high_s16(v));
}

// Sub-block j's row minimums dmin * mn of a Q4_K/Q5_K group-superblock g.
MINNOW_INLINE void k_sub_minimums(const uint8_t* g, int j, const float32x4_t dmin[2], float32x4_t min[2]) {
  scales_u8(g + 96 + 8 * j, min);
  for (int h = 0; h < 2; ++h) min[h] = vmulq_f32(dmin[h], min[h]);
}

// Q4_K/Q5_K/Q6_K rows (packed.hpp): each sub-block as a Q4_1/Q5 block whose row scales are
// d * sc and minimums dmin * mn; Q6_K's weights q - 32 are signed (|w| <= 32: 4 products
// fit an int16), two scales a sub-block.
template <typename IntDot, typename Act, DType T, int NT>
inline void k_group(const uint8_t* g0, const typename Act::Block* x, int64_t nb, float* out) {
  constexpr bool k6 = T == DType::Q6_K, kMinimumsApart = !k6 && NT > 1;
  const uint8_t* g = g0;
  constexpr int kPlanes = T == DType::Q4_K ? 0 : T == DType::Q5_K ? 1 : 2;
  constexpr size_t kHeader = k6 ? 144 : 160, kSub = 32 * kPlanes + 128, kSuper = kHeader + 8 * kSub;
  float32x4_t acc[NT][2], accm[NT][2];
  for (int t = 0; t < NT; ++t) acc[t][0] = acc[t][1] = accm[t][0] = accm[t][1] = vdupq_n_f32(0.0f);
  for (int64_t s = 0; s < nb / 8; ++s, g += kSuper) {
    const float16x8_t dh = vreinterpretq_f16_u8(vld1q_u8(g));
    const float32x4_t d[2] = {vcvt_f32_f16(vget_low_f16(dh)), vcvt_high_f32_f16(dh)};
    float32x4_t dmin[2] = {};
    if constexpr (!k6) {
      const float16x8_t mh = vreinterpretq_f16_u8(vld1q_u8(g + 16));
      dmin[0] = vcvt_f32_f16(vget_low_f16(mh));
      dmin[1] = vcvt_high_f32_f16(mh);
    }
    for (int j = 0; j < 8; ++j) {
      const uint8_t* sub = g + kHeader + j * kSub;
      prefetch_block<kSub>(sub);
      Weights w;
      unpack_nibbles(sub + 32 * kPlanes, w);
      if constexpr (kPlanes >= 1) add_high_bits(sub, w, 16);
      if constexpr (kPlanes >= 2) add_high_bits(sub + 32, w, 32);
      const typename Act::Block* xj = x + 8 * s + j;
      if constexpr (k6) {
        const int8x16_t k32 = vdupq_n_s8(32);
        for (int i = 0; i < 8; ++i) {
          w.lo[i] = vsubq_s8(w.lo[i], k32);
          w.hi[i] = vsubq_s8(w.hi[i], k32);
        }
        float32x4_t s_lo[2], s_hi[2];
        scales_i8(g + 16 + 8 * (2 * j), s_lo);
        scales_i8(g + 16 + 8 * (2 * j + 1), s_hi);
        for (int h = 0; h < 2; ++h) {
          s_lo[h] = vmulq_f32(d[h], s_lo[h]);
          s_hi[h] = vmulq_f32(d[h], s_hi[h]);
        }
        // The two halves' sums for each token, in the reference's order: lo, then hi.
        RowSums lo[NT];
        IntDot::template for_token_pairs<Act, 0, 4, 4, NT>(w, xj, nb, [&](int t, RowSums sum) MINNOW_INLINE_LAMBDA { lo[t] = sum; });
        IntDot::template for_token_pairs<Act, 4, 4, 4, NT>(w, xj, nb, [&](int t, RowSums hi) MINNOW_INLINE_LAMBDA {
          const float xd = xj[t * nb].d;
          acc[t][0] = vfmaq_f32(acc[t][0], vmulq_n_f32(s_lo[0], xd), vcvtq_f32_s32(lo[t].lo));
          acc[t][1] = vfmaq_f32(acc[t][1], vmulq_n_f32(s_lo[1], xd), vcvtq_f32_s32(lo[t].hi));
          acc[t][0] = vfmaq_f32(acc[t][0], vmulq_n_f32(s_hi[0], xd), vcvtq_f32_s32(hi.lo));
          acc[t][1] = vfmaq_f32(acc[t][1], vmulq_n_f32(s_hi[1], xd), vcvtq_f32_s32(hi.hi));
        });
      } else {
        float32x4_t scale[2], min[2];
        scales_u8(g + 32 + 8 * j, scale);
        for (int h = 0; h < 2; ++h) scale[h] = vmulq_f32(d[h], scale[h]);
        if constexpr (!kMinimumsApart) k_sub_minimums(g, j, dmin, min);
        IntDot::template for_token_pairs<Act, 0, 8, 8, NT>(w, xj, nb, [&](int t, RowSums sum) MINNOW_INLINE_LAMBDA {
          const auto& xb = xj[t * nb];
          acc[t][0] = vfmaq_f32(acc[t][0], vmulq_n_f32(scale[0], xb.d), vcvtq_f32_s32(sum.lo));
          acc[t][1] = vfmaq_f32(acc[t][1], vmulq_n_f32(scale[1], xb.d), vcvtq_f32_s32(sum.hi));
          if constexpr (!kMinimumsApart) {
            accm[t][0] = vfmsq_n_f32(accm[t][0], min[0], xb.s);
            accm[t][1] = vfmsq_n_f32(accm[t][1], min[1], xb.s);
          }
        });
      }
    }
  }
  if constexpr (kMinimumsApart) {
    // As in q4_group: the minimums' pass, in the same order, after the integer sums.
    for (int64_t s = 0; s < nb / 8; ++s) {
      const uint8_t* gs = g0 + s * kSuper;
      const float16x8_t mh = vreinterpretq_f16_u8(vld1q_u8(gs + 16));
      const float32x4_t dmin[2] = {vcvt_f32_f16(vget_low_f16(mh)), vcvt_high_f32_f16(mh)};
      for (int j = 0; j < 8; ++j) {
        float32x4_t min[2];
        k_sub_minimums(gs, j, dmin, min);
        for (int t = 0; t < NT; ++t) {
          const float xs = x[t * nb + 8 * s + j].s;
          accm[t][0] = vfmsq_n_f32(accm[t][0], min[0], xs);
          accm[t][1] = vfmsq_n_f32(accm[t][1], min[1], xs);
        }
      }
    }
  }
  for (int t = 0; t < NT; ++t) {
    vst1q_f32(out + 8 * t, vaddq_f32(acc[t][0], accm[t][0]));
    vst1q_f32(out + 8 * t + 4, vaddq_f32(acc[t][1], accm[t][1]));
  }
}

template <int NT, typename Fn>
inline void for_tokens(int n_tokens, Fn fn) {
  if constexpr (NT > 1) {
    if (n_tokens < NT) return for_tokens<NT - 1>(n_tokens, fn);
  }
  fn(std::integral_constant<int, NT>{});
}

// Tokens one pass over a group takes. The baseline's widening multiplies need 8 scratch
// vectors beside the 16 weight vectors, so with 15-bit activations 3 or 4 tokens' float
// accumulators spill, and passes of 2 tokens (Q8_0, whose products chain by 2: of 1)
// cost fewer instructions than one of 4 (bench/arm/kernel_insns.py, per block and token
// under cortex-a53: Q4_0 167 vs 182, Q8_0 206 vs 226).
template <typename IntDot, typename Act, DType T>
constexpr int kTokensPerPass = !std::is_same_v<IntDot, OneTokenAtATime<WideningDot>> ||
                                       !std::is_same_v<Act, Split15Activations>
                                   ? kMaxMultiTokens
                               : T == DType::Q8_0 ? 1
                                                  : 2;

// n_tokens (1..NT) tokens against one group, in one pass.
template <typename IntDot, typename Act, DType T, int NT>
MINNOW_INLINE void packed_pass(const uint8_t* group, const typename Act::Block* x, int64_t nb, int n_tokens, float* out) {
  for_tokens<NT>(n_tokens, [&](auto nt) MINNOW_INLINE_LAMBDA {
    if constexpr (T == DType::Q8_0)
      q8_group<IntDot, Act, nt.value>(group, x, nb, out);
    else if constexpr (T == DType::Q4_K || T == DType::Q5_K || T == DType::Q6_K)
      k_group<IntDot, Act, T, nt.value>(group, x, nb, out);
    else
      q4_group<IntDot, Act, T, nt.value>(group, x, nb, out);
  });
}

template <typename IntDot, typename Act, DType T>
void packed_group(const uint8_t* group, const typename Act::Block* x, int64_t nb, int n_tokens, float* out) {
  constexpr int kPass = kTokensPerPass<IntDot, Act, T>;
  if constexpr (kPass == kMaxMultiTokens) {
    packed_pass<IntDot, Act, T, kPass>(group, x, nb, n_tokens, out);
  } else {
    for (int t0 = 0; t0 < n_tokens; t0 += kPass)
      packed_pass<IntDot, Act, T, kPass>(group, x + t0 * nb, nb, std::min(kPass, n_tokens - t0), out + 8 * t0);
  }
}

#undef MINNOW_INLINE_LAMBDA
#undef MINNOW_INLINE
}  // namespace

// The exported entry points of one instruction set, over its IntDot.
#define MINNOW_DEFINE_PACKED_KERNELS(isa, IntDot)                                                          \
  void packed_q4_0_##isa(const uint8_t* g, const Q8Block* x, int64_t nb, int n, float* out) {              \
    packed_group<IntDot, Int8Activations, DType::Q4_0>(g, x, nb, n, out);                                  \
  }                                                                                                        \
  void packed_q4_1_##isa(const uint8_t* g, const Q8Block* x, int64_t nb, int n, float* out) {              \
    packed_group<IntDot, Int8Activations, DType::Q4_1>(g, x, nb, n, out);                                  \
  }                                                                                                        \
  void packed_q5_0_##isa(const uint8_t* g, const Q8Block* x, int64_t nb, int n, float* out) {              \
    packed_group<IntDot, Int8Activations, DType::Q5_0>(g, x, nb, n, out);                                  \
  }                                                                                                        \
  void packed_q5_1_##isa(const uint8_t* g, const Q8Block* x, int64_t nb, int n, float* out) {              \
    packed_group<IntDot, Int8Activations, DType::Q5_1>(g, x, nb, n, out);                                  \
  }                                                                                                        \
  void packed_q8_0_##isa(const uint8_t* g, const Q8Block* x, int64_t nb, int n, float* out) {              \
    packed_group<IntDot, Int8Activations, DType::Q8_0>(g, x, nb, n, out);                                  \
  }                                                                                                        \
  void packed_q4_k_##isa(const uint8_t* g, const Q8Block* x, int64_t nb, int n, float* out) {              \
    packed_group<IntDot, Int8Activations, DType::Q4_K>(g, x, nb, n, out);                                  \
  }                                                                                                        \
  void packed_q5_k_##isa(const uint8_t* g, const Q8Block* x, int64_t nb, int n, float* out) {              \
    packed_group<IntDot, Int8Activations, DType::Q5_K>(g, x, nb, n, out);                                  \
  }                                                                                                        \
  void packed_q6_k_##isa(const uint8_t* g, const Q8Block* x, int64_t nb, int n, float* out) {              \
    packed_group<IntDot, Int8Activations, DType::Q6_K>(g, x, nb, n, out);                                  \
  }                                                                                                        \
  void packed15_q4_0_##isa(const uint8_t* g, const Q15Block* x, int64_t nb, int n, float* out) {           \
    packed_group<IntDot, Split15Activations, DType::Q4_0>(g, x, nb, n, out);                               \
  }                                                                                                        \
  void packed15_q4_1_##isa(const uint8_t* g, const Q15Block* x, int64_t nb, int n, float* out) {           \
    packed_group<IntDot, Split15Activations, DType::Q4_1>(g, x, nb, n, out);                               \
  }                                                                                                        \
  void packed15_q5_0_##isa(const uint8_t* g, const Q15Block* x, int64_t nb, int n, float* out) {           \
    packed_group<IntDot, Split15Activations, DType::Q5_0>(g, x, nb, n, out);                               \
  }                                                                                                        \
  void packed15_q5_1_##isa(const uint8_t* g, const Q15Block* x, int64_t nb, int n, float* out) {           \
    packed_group<IntDot, Split15Activations, DType::Q5_1>(g, x, nb, n, out);                               \
  }                                                                                                        \
  void packed15_q8_0_##isa(const uint8_t* g, const Q15Block* x, int64_t nb, int n, float* out) {           \
    packed_group<IntDot, Split15Activations, DType::Q8_0>(g, x, nb, n, out);                               \
  }                                                                                                        \
  void packed15_q4_k_##isa(const uint8_t* g, const Q15Block* x, int64_t nb, int n, float* out) {           \
    packed_group<IntDot, Split15Activations, DType::Q4_K>(g, x, nb, n, out);                               \
  }                                                                                                        \
  void packed15_q5_k_##isa(const uint8_t* g, const Q15Block* x, int64_t nb, int n, float* out) {           \
    packed_group<IntDot, Split15Activations, DType::Q5_K>(g, x, nb, n, out);                               \
  }                                                                                                        \
  void packed15_q6_k_##isa(const uint8_t* g, const Q15Block* x, int64_t nb, int n, float* out) {           \
    packed_group<IntDot, Split15Activations, DType::Q6_K>(g, x, nb, n, out);                               \
  }

}  // namespace minnow::kernels
