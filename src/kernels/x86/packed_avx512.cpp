// Packed-row kernels over 16 rows at once for AVX-512 (F, BW, VL, VNNI): two consecutive
// groups of 8 (kernels/packed.hpp), the first in the low 256 bits of each register, the
// second in the high. Each activation broadcast then feeds 16 rows instead of 8, and every
// per-block step (conversion, scaling, accumulation) covers twice the rows per instruction.
// Every lane does what packed_dot.hpp does for its row, in the same order, so the results
// are the 8-row kernels' bit for bit. Built with -mavx512*; only reached after
// dispatch.cpp's CPUID check.
#include <immintrin.h>

// GCC 12 flags its own _mm512_inserti64x4 (an undefined merge source inside the header).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <cstring>
#include <type_traits>

#include "kernels/ops.hpp"
#include "kernels/packed.hpp"
#include "kernels/x86/packed_avx512.hpp"

namespace minnow::kernels {
namespace {

constexpr size_t kPrefetchAhead = 4096;  // as packed_dot.hpp: keeps enough loads in flight
template <size_t kBytes>
inline void prefetch2(const uint8_t* a, size_t stride) {
  for (size_t l = 0; l < kBytes; l += 64) {
    _mm_prefetch(reinterpret_cast<const char*>(a) + kPrefetchAhead + l, _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(a) + stride + kPrefetchAhead + l, _MM_HINT_T0);
  }
}

// 32 bytes at a (group A) and at a + stride (group B).
inline __m512i load2(const uint8_t* a, size_t stride) {
  return _mm512_inserti64x4(_mm512_zextsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(a))),
                            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + stride)), 1);
}
// 8 halves from each group as 16 floats.
inline __m512 halves2(const uint8_t* a, size_t stride) {
  const __m256i h = _mm256_inserti128_si256(_mm256_zextsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a))),
                                            _mm_loadu_si128(reinterpret_cast<const __m128i*>(a + stride)), 1);
  return _mm512_cvtph_ps(h);
}
// 8 small scales from each group (u8, or i8 for Q6_K) as 16 floats.
inline __m128i bytes8x2(const uint8_t* a, size_t stride) {
  return _mm_unpacklo_epi64(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(a)),
                            _mm_loadl_epi64(reinterpret_cast<const __m128i*>(a + stride)));
}
inline __m512 scales_u8(const uint8_t* a, size_t stride) {
  return _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(bytes8x2(a, stride)));
}
inline __m512 scales_i8(const uint8_t* a, size_t stride) {
  return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(bytes8x2(a, stride)));
}

// Activation bytes 4j..4j+3, in every lane.
inline __m512i broadcast4(const int8_t* q, int j) {
  int32_t v;
  std::memcpy(&v, q + 4 * j, 4);
  return _mm512_set1_epi32(v);
}

#define MINNOW_INLINE inline __attribute__((always_inline))

// In lane r, row r's sum over chunks j: w[j] unsigned (any of 0..255: vpdpbusd adds in
// int32) against activation bytes 4j..4j+3. Two accumulators halve the dependent chain.
MINNOW_INLINE __m512i unsigned_dot(const __m512i w[8], const int8_t* q) {
  __m512i a = _mm512_setzero_si512(), b = _mm512_setzero_si512();
  for (int j = 0; j < 8; j += 2) {
    a = _mm512_dpbusd_epi32(a, w[j], broadcast4(q, j));
    b = _mm512_dpbusd_epi32(b, w[j + 1], broadcast4(q, j + 1));
  }
  return _mm512_add_epi32(a, b);
}
// Signed weights, chunks kFirst..kFirst+kN-1: |w| (aw) against x negated where w < 0 (neg:
// w's sign bits). AVX-512 has no vpsignb; a masked subtraction does it (|x| <= 127, so
// negating is exact).
template <int kFirst, int kN>
MINNOW_INLINE __m512i signed_dot(const __m512i aw[8], const __mmask64 neg[8], const int8_t* q) {
  __m512i acc[2] = {_mm512_setzero_si512(), _mm512_setzero_si512()};
  for (int j = kFirst; j < kFirst + kN; ++j) {
    const __m512i x = broadcast4(q, j);
    acc[j & 1] = _mm512_dpbusd_epi32(acc[j & 1], aw[j], _mm512_mask_sub_epi8(x, neg[j], _mm512_setzero_si512(), x));
  }
  return _mm512_add_epi32(acc[0], acc[1]);
}

// How an activation block meets the weights (as packed_dot.hpp): int8 in one pass; 15-bit
// as 128 * (w . hi) + (w . lo).
struct Int8 {
  using Block = Q8Block;
  static MINNOW_INLINE __m512i unsigned_sum(const __m512i w[8], const Block& x) { return unsigned_dot(w, x.q); }
  template <int kFirst, int kN>
  static MINNOW_INLINE __m512i signed_sum(const __m512i aw[8], const __mmask64 neg[8], const Block& x) {
    return signed_dot<kFirst, kN>(aw, neg, x.q);
  }
};
struct Split15 {
  using Block = Q15Block;
  static MINNOW_INLINE __m512i unsigned_sum(const __m512i w[8], const Block& x) {
    return _mm512_add_epi32(_mm512_slli_epi32(unsigned_dot(w, x.hi), 7), unsigned_dot(w, x.lo));
  }
  template <int kFirst, int kN>
  static MINNOW_INLINE __m512i signed_sum(const __m512i aw[8], const __mmask64 neg[8], const Block& x) {
    return _mm512_add_epi32(_mm512_slli_epi32(signed_dot<kFirst, kN>(aw, neg, x.hi), 7),
                            signed_dot<kFirst, kN>(aw, neg, x.lo));
  }
};

// ORs each element's fifth bit (as `value`) into its byte (packed_dot.hpp's add_fifth_bits:
// the byte shuffle works within 128-bit lanes, and both groups keep the 8-row layout).
inline void add_fifth_bits(const uint8_t* h, size_t stride, __m512i w[8], char value) {
  const __m512i bits = load2(h, stride);
  const __m512i spread = _mm512_set_epi8(12, 12, 12, 12, 8, 8, 8, 8, 4, 4, 4, 4, 0, 0, 0, 0,  //
                                         12, 12, 12, 12, 8, 8, 8, 8, 4, 4, 4, 4, 0, 0, 0, 0,  //
                                         12, 12, 12, 12, 8, 8, 8, 8, 4, 4, 4, 4, 0, 0, 0, 0,  //
                                         12, 12, 12, 12, 8, 8, 8, 8, 4, 4, 4, 4, 0, 0, 0, 0);
  const __m512i low_mask = _mm512_set1_epi32(0x08040201), high_mask = _mm512_set1_epi32(static_cast<int>(0x80402010u));
  const __m512i v = _mm512_set1_epi8(value);
  for (int i = 0; i < 4; ++i) {
    const __m512i mine = _mm512_shuffle_epi8(bits, _mm512_add_epi8(spread, _mm512_set1_epi8(static_cast<char>(i))));
    // One bit per byte in each mask, so "any bit" is "that bit"; nibbles are below `value`: adding is OR.
    w[i] = _mm512_mask_add_epi8(w[i], _mm512_test_epi8_mask(mine, low_mask), w[i], v);
    w[i + 4] = _mm512_mask_add_epi8(w[i + 4], _mm512_test_epi8_mask(mine, high_mask), w[i + 4], v);
  }
}

inline void nibbles(const uint8_t* p, size_t stride, __m512i w[8]) {
  const __m512i low4 = _mm512_set1_epi8(0x0f);
  for (int i = 0; i < 4; ++i) {
    const __m512i b = load2(p + 32 * i, stride);
    w[i] = _mm512_and_si512(b, low4);
    w[i + 4] = _mm512_and_si512(_mm512_srli_epi16(b, 4), low4);
  }
}

// Q4_0/Q4_1/Q5_0/Q5_1 (packed_dot.hpp's q4_group).
template <typename Act, DType T, int NT>
inline void q4_pair(const uint8_t* g, size_t stride, const typename Act::Block* x, int64_t nb, float* out) {
  constexpr bool kMin = T == DType::Q4_1 || T == DType::Q5_1, k5 = T == DType::Q5_0 || T == DType::Q5_1;
  constexpr size_t kHighAt = kMin ? 32 : 16, kQuantsAt = kHighAt + (k5 ? 32 : 0), kBytes = kQuantsAt + 128;
  __m512 acc[NT], accm[NT];
  for (int t = 0; t < NT; ++t) acc[t] = accm[t] = _mm512_setzero_ps();
  for (int64_t b = 0; b < nb; ++b, g += kBytes) {
    prefetch2<kBytes>(g, stride);
    const __m512 d = halves2(g, stride);
    const __m512 m = kMin ? halves2(g + 16, stride) : _mm512_mul_ps(d, _mm512_set1_ps(k5 ? -16.0f : -8.0f));
    __m512i w[8];
    nibbles(g + kQuantsAt, stride, w);
    if constexpr (k5) add_fifth_bits(g + kHighAt, stride, w, 16);
    for (int t = 0; t < NT; ++t) {
      const auto& xb = x[t * nb + b];
      const __m512i sum = Act::unsigned_sum(w, xb);
      acc[t] = _mm512_fmadd_ps(_mm512_mul_ps(d, _mm512_set1_ps(xb.d)), _mm512_cvtepi32_ps(sum), acc[t]);
      accm[t] = _mm512_fmadd_ps(m, _mm512_set1_ps(xb.s), accm[t]);
    }
  }
  for (int t = 0; t < NT; ++t) _mm512_storeu_ps(out + 16 * t, _mm512_add_ps(acc[t], accm[t]));
}

template <typename Act, int NT>
inline void q8_pair(const uint8_t* g, size_t stride, const typename Act::Block* x, int64_t nb, float* out) {
  constexpr size_t kBytes = 16 + 256;
  __m512 acc[NT];
  for (int t = 0; t < NT; ++t) acc[t] = _mm512_setzero_ps();
  for (int64_t b = 0; b < nb; ++b, g += kBytes) {
    prefetch2<kBytes>(g, stride);
    const __m512 d = halves2(g, stride);
    __m512i aw[8];
    __mmask64 neg[8];
    for (int j = 0; j < 8; ++j) {
      const __m512i w = load2(g + 16 + 32 * j, stride);
      aw[j] = _mm512_abs_epi8(w);
      neg[j] = _mm512_movepi8_mask(w);
    }
    for (int t = 0; t < NT; ++t) {
      const auto& xb = x[t * nb + b];
      const __m512i sum = Act::template signed_sum<0, 8>(aw, neg, xb);
      acc[t] = _mm512_fmadd_ps(_mm512_mul_ps(d, _mm512_set1_ps(xb.d)), _mm512_cvtepi32_ps(sum), acc[t]);
    }
  }
  for (int t = 0; t < NT; ++t) _mm512_storeu_ps(out + 16 * t, acc[t]);
}

// Q4_K/Q5_K/Q6_K (packed_dot.hpp's k_group).
template <typename Act, DType T, int NT>
inline void k_pair(const uint8_t* g, size_t stride, const typename Act::Block* x, int64_t nb, float* out) {
  constexpr bool k6 = T == DType::Q6_K;
  constexpr int kPlanes = T == DType::Q4_K ? 0 : T == DType::Q5_K ? 1 : 2;
  constexpr size_t kHeader = k6 ? 144 : 160, kSub = 32 * kPlanes + 128, kSuper = kHeader + 8 * kSub;
  __m512 acc[NT], accm[NT];
  for (int t = 0; t < NT; ++t) acc[t] = accm[t] = _mm512_setzero_ps();
  for (int64_t s = 0; s < nb / 8; ++s, g += kSuper) {
    const __m512 d = halves2(g, stride);
    for (int j = 0; j < 8; ++j) {
      const uint8_t* sub = g + kHeader + j * kSub;
      prefetch2<kSub>(sub, stride);
      __m512i w[8];
      nibbles(sub + 32 * kPlanes, stride, w);
      if constexpr (kPlanes >= 1) add_fifth_bits(sub, stride, w, 16);
      if constexpr (kPlanes >= 2) add_fifth_bits(sub + 32, stride, w, 32);
      const typename Act::Block* xj = x + 8 * s + j;
      if constexpr (k6) {
        __mmask64 neg[8];
        for (int i = 0; i < 8; ++i) {
          w[i] = _mm512_sub_epi8(w[i], _mm512_set1_epi8(32));
          neg[i] = _mm512_movepi8_mask(w[i]);
          w[i] = _mm512_abs_epi8(w[i]);
        }
        const __m512 s_lo = _mm512_mul_ps(d, scales_i8(g + 16 + 8 * (2 * j), stride));
        const __m512 s_hi = _mm512_mul_ps(d, scales_i8(g + 16 + 8 * (2 * j + 1), stride));
        for (int t = 0; t < NT; ++t) {
          const auto& xb = xj[t * nb];
          const __m512 xd = _mm512_set1_ps(xb.d);
          const __m512i lo = Act::template signed_sum<0, 4>(w, neg, xb);
          const __m512i hi = Act::template signed_sum<4, 4>(w, neg, xb);
          acc[t] = _mm512_fmadd_ps(_mm512_mul_ps(s_lo, xd), _mm512_cvtepi32_ps(lo), acc[t]);
          acc[t] = _mm512_fmadd_ps(_mm512_mul_ps(s_hi, xd), _mm512_cvtepi32_ps(hi), acc[t]);
        }
      } else {
        const __m512 scale = _mm512_mul_ps(d, scales_u8(g + 32 + 8 * j, stride));
        const __m512 min = _mm512_mul_ps(halves2(g + 16, stride), scales_u8(g + 96 + 8 * j, stride));
        for (int t = 0; t < NT; ++t) {
          const auto& xb = xj[t * nb];
          const __m512i sum = Act::unsigned_sum(w, xb);
          acc[t] = _mm512_fmadd_ps(_mm512_mul_ps(scale, _mm512_set1_ps(xb.d)), _mm512_cvtepi32_ps(sum), acc[t]);
          accm[t] = _mm512_fnmadd_ps(min, _mm512_set1_ps(xb.s), accm[t]);
        }
      }
    }
  }
  for (int t = 0; t < NT; ++t) _mm512_storeu_ps(out + 16 * t, _mm512_add_ps(acc[t], accm[t]));
}

template <int NT, typename Fn>
inline void for_tokens(int n_tokens, Fn fn) {
  if constexpr (NT > 1) {
    if (n_tokens < NT) return for_tokens<NT - 1>(n_tokens, fn);
  }
  fn(std::integral_constant<int, NT>{});
}

template <typename Act, DType T>
void packed_pair(const uint8_t* group, const typename Act::Block* x, int64_t nb, int n_tokens, float* out) {
  const size_t stride = packed_group_bytes(T, nb * 32);
  for_tokens<kMaxMultiTokens16>(n_tokens, [&](auto nt) {
    if constexpr (T == DType::Q8_0)
      q8_pair<Act, nt.value>(group, stride, x, nb, out);
    else if constexpr (T == DType::Q4_K || T == DType::Q5_K || T == DType::Q6_K)
      k_pair<Act, T, nt.value>(group, stride, x, nb, out);
    else
      q4_pair<Act, T, nt.value>(group, stride, x, nb, out);
  });
}

// The kernel of type t over Act's blocks, or nullptr for a type without one.
template <typename Act>
auto packed_pair_of(DType t) -> void (*)(const uint8_t*, const typename Act::Block*, int64_t, int, float*) {
  switch (t) {
    case DType::Q4_0: return packed_pair<Act, DType::Q4_0>;
    case DType::Q4_1: return packed_pair<Act, DType::Q4_1>;
    case DType::Q5_0: return packed_pair<Act, DType::Q5_0>;
    case DType::Q5_1: return packed_pair<Act, DType::Q5_1>;
    case DType::Q8_0: return packed_pair<Act, DType::Q8_0>;
    case DType::Q4_K: return packed_pair<Act, DType::Q4_K>;
    case DType::Q5_K: return packed_pair<Act, DType::Q5_K>;
    case DType::Q6_K: return packed_pair<Act, DType::Q6_K>;
    default: return nullptr;
  }
}

}  // namespace

PackedDotFn packed16_avx512(DType t) { return packed_pair_of<Int8>(t); }
PackedDot15Fn packed16_15_avx512(DType t) { return packed_pair_of<Split15>(t); }

}  // namespace minnow::kernels
