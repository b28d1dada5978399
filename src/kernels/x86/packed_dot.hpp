// Decode kernels over packed rows (kernels/packed.hpp), written once for two integer dot
// instructions: packed_avx2.cpp instantiates them with vpmaddubsw, packed_vnni.cpp and
// packed_avx512vnni.cpp with vpdpbusd (packed_dpbusd.hpp). Everything here has internal linkage, so each file gets its own
// copy compiled for its own instruction set.
#pragma once
#include <immintrin.h>

#include <cstring>
#include <type_traits>

#include "kernels/ops.hpp"

namespace minnow::kernels {

#define MINNOW_PACKED_KERNELS(isa)                                                                          \
  void packed_q4_0_##isa(const uint8_t* group, const Q8Block* x, int64_t nb, int n_tokens, float* out);    \
  void packed_q4_1_##isa(const uint8_t* group, const Q8Block* x, int64_t nb, int n_tokens, float* out);    \
  void packed_q5_0_##isa(const uint8_t* group, const Q8Block* x, int64_t nb, int n_tokens, float* out);    \
  void packed_q5_1_##isa(const uint8_t* group, const Q8Block* x, int64_t nb, int n_tokens, float* out);    \
  void packed_q8_0_##isa(const uint8_t* group, const Q8Block* x, int64_t nb, int n_tokens, float* out);    \
  void packed15_q4_0_##isa(const uint8_t* group, const Q15Block* x, int64_t nb, int n_tokens, float* out); \
  void packed15_q4_1_##isa(const uint8_t* group, const Q15Block* x, int64_t nb, int n_tokens, float* out); \
  void packed15_q5_0_##isa(const uint8_t* group, const Q15Block* x, int64_t nb, int n_tokens, float* out); \
  void packed15_q5_1_##isa(const uint8_t* group, const Q15Block* x, int64_t nb, int n_tokens, float* out); \
  void packed15_q8_0_##isa(const uint8_t* group, const Q15Block* x, int64_t nb, int n_tokens, float* out); \
  void packed_q4_k_##isa(const uint8_t* group, const Q8Block* x, int64_t nb, int n_tokens, float* out);    \
  void packed_q5_k_##isa(const uint8_t* group, const Q8Block* x, int64_t nb, int n_tokens, float* out);    \
  void packed_q6_k_##isa(const uint8_t* group, const Q8Block* x, int64_t nb, int n_tokens, float* out);    \
  void packed15_q4_k_##isa(const uint8_t* group, const Q15Block* x, int64_t nb, int n_tokens, float* out); \
  void packed15_q5_k_##isa(const uint8_t* group, const Q15Block* x, int64_t nb, int n_tokens, float* out); \
  void packed15_q6_k_##isa(const uint8_t* group, const Q15Block* x, int64_t nb, int n_tokens, float* out);
MINNOW_PACKED_KERNELS(avx2)
MINNOW_PACKED_KERNELS(vnni)
MINNOW_PACKED_KERNELS(avx512vnni)
#undef MINNOW_PACKED_KERNELS

namespace {

// Decode streams every weight once: asking for the bytes 4 KiB ahead (the rest of this
// group and the start of the next, which follows in memory) keeps enough loads in flight
// to hide memory latency; the hardware prefetcher alone left decode 1.5-2x slower here.
constexpr size_t kPrefetchAhead = 4096;
template <size_t kBytes>
inline void prefetch_block(const uint8_t* g) {
  for (size_t l = 0; l < kBytes; l += 64) _mm_prefetch(reinterpret_cast<const char*>(g) + kPrefetchAhead + l, _MM_HINT_T0);
}

// Activation bytes 4j..4j+3, in every lane.
inline __m256i broadcast4(const int8_t* q, int j) {
  int32_t v;
  std::memcpy(&v, q + 4 * j, 4);
  return _mm256_set1_epi32(v);
}

// IntDot (one per instruction set) gives, in lane r, row r's 32-element integer sum:
//   nibble_dot<k5>(w, q): w[j] unsigned (0..15, or 0..31 with k5), against activation
//                         bytes 4j..4j+3
//   signed_dot(aw, sx):  aw[j] unsigned (|w|), sx[j] signed (x with w's sign), per lane
template <typename IntDot>
inline __m256i signed_weights_dot(const __m256i w[8], const __m256i aw[8], const int8_t* q) {
  __m256i sx[8];
  for (int j = 0; j < 8; ++j) sx[j] = _mm256_sign_epi8(broadcast4(q, j), w[j]);
  return IntDot::signed_dot(aw, sx);
}

// The same over the 4 chunks from `first` (Q6_K's halves), weights of at most 32 in size.
template <typename IntDot>
inline __m256i small_signed_weights_dot4(const __m256i w[8], const __m256i aw[8], const int8_t* q, int first) {
  __m256i sx[4];
  for (int j = 0; j < 4; ++j) sx[j] = _mm256_sign_epi8(broadcast4(q, first + j), w[first + j]);
  return IntDot::small_signed_dot4(aw + first, sx);
}

// How an activation block meets the weights: int8 in one pass; 15-bit as
// 128 * (w . hi) + (w . lo), exact in int32.
struct Int8Activations {
  using Block = Q8Block;
  template <typename IntDot, bool k5>
  static __m256i nibbles(const __m256i w[8], const Block& x) {
    return IntDot::template nibble_dot<k5>(w, x.q);
  }
  template <typename IntDot>
  static __m256i bytes(const __m256i w[8], const __m256i aw[8], const Block& x) {
    return signed_weights_dot<IntDot>(w, aw, x.q);
  }
  template <typename IntDot>
  static __m256i small_bytes4(const __m256i w[8], const __m256i aw[8], const Block& x, int first) {
    return small_signed_weights_dot4<IntDot>(w, aw, x.q, first);
  }
};

struct Split15Activations {
  using Block = Q15Block;
  template <typename IntDot, bool k5>
  static __m256i nibbles(const __m256i w[8], const Block& x) {
    return _mm256_add_epi32(_mm256_slli_epi32(IntDot::template nibble_dot<k5>(w, x.hi), 7),
                            IntDot::template nibble_dot<k5>(w, x.lo));
  }
  template <typename IntDot>
  static __m256i bytes(const __m256i w[8], const __m256i aw[8], const Block& x) {
    return _mm256_add_epi32(_mm256_slli_epi32(signed_weights_dot<IntDot>(w, aw, x.hi), 7),
                            signed_weights_dot<IntDot>(w, aw, x.lo));
  }
  template <typename IntDot>
  static __m256i small_bytes4(const __m256i w[8], const __m256i aw[8], const Block& x, int first) {
    return _mm256_add_epi32(_mm256_slli_epi32(small_signed_weights_dot4<IntDot>(w, aw, x.hi, first), 7),
                            small_signed_weights_dot4<IntDot>(w, aw, x.lo, first));
  }
};

// Q5: ORs each element's fifth bit (as 16; Q6_K's sixth, as 32) into its nibble byte. Chunk i's bits sit in
// byte (r%4)*4 + i of each 16-byte half (rows 0-3, 4-7): one in-lane shuffle hands every
// lane its row's byte, then bit e (low nibbles) or 4+e (high) selects byte e's bit.
inline void add_fifth_bits(const uint8_t* h, __m256i w[8], char value = 16) {
  const __m256i bits = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(h));
  const __m256i spread = _mm256_setr_epi8(0, 0, 0, 0, 4, 4, 4, 4, 8, 8, 8, 8, 12, 12, 12, 12,  //
                                          0, 0, 0, 0, 4, 4, 4, 4, 8, 8, 8, 8, 12, 12, 12, 12);
  const __m256i low_mask = _mm256_set1_epi32(0x08040201), high_mask = _mm256_set1_epi32(static_cast<int>(0x80402010u));
  const __m256i sixteen = _mm256_set1_epi8(value);
  for (int i = 0; i < 4; ++i) {
    const __m256i mine = _mm256_shuffle_epi8(bits, _mm256_add_epi8(spread, _mm256_set1_epi8(static_cast<char>(i))));
    const __m256i lo = _mm256_cmpeq_epi8(_mm256_and_si256(mine, low_mask), low_mask);
    const __m256i hi = _mm256_cmpeq_epi8(_mm256_and_si256(mine, high_mask), high_mask);
    w[i] = _mm256_or_si256(w[i], _mm256_and_si256(lo, sixteen));
    w[i + 4] = _mm256_or_si256(w[i + 4], _mm256_and_si256(hi, sixteen));
  }
}

// Q4_0/Q4_1/Q5_0/Q5_1 rows: nibbles (plus fifth bits), row scales, minimums (or the
// format's offset times the scale).
template <typename IntDot, typename Act, DType T, int NT>
inline void q4_group(const uint8_t* g, const typename Act::Block* x, int64_t nb, float* out) {
  constexpr bool kMin = T == DType::Q4_1 || T == DType::Q5_1, k5 = T == DType::Q5_0 || T == DType::Q5_1;
  constexpr size_t kHighAt = kMin ? 32 : 16, kQuantsAt = kHighAt + (k5 ? 32 : 0), kBytes = kQuantsAt + 128;
  const __m256i low4 = _mm256_set1_epi8(0x0f);
  __m256 acc[NT], accm[NT];
  for (int t = 0; t < NT; ++t) acc[t] = accm[t] = _mm256_setzero_ps();
  for (int64_t b = 0; b < nb; ++b, g += kBytes) {
    prefetch_block<kBytes>(g);
    const __m256 d = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(g)));
    const __m256 m = kMin ? _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(g + 16)))
                          : _mm256_mul_ps(d, _mm256_set1_ps(k5 ? -16.0f : -8.0f));
    __m256i w[8];
    for (int i = 0; i < 4; ++i) {
      const __m256i p = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(g + kQuantsAt + 32 * i));
      w[i] = _mm256_and_si256(p, low4);
      w[i + 4] = _mm256_and_si256(_mm256_srli_epi16(p, 4), low4);
    }
    if constexpr (k5) add_fifth_bits(g + kHighAt, w);
    for (int t = 0; t < NT; ++t) {
      const auto& xb = x[t * nb + b];
      const __m256i sum = Act::template nibbles<IntDot, k5>(w, xb);
      acc[t] = _mm256_fmadd_ps(_mm256_mul_ps(d, _mm256_set1_ps(xb.d)), _mm256_cvtepi32_ps(sum), acc[t]);
      accm[t] = _mm256_fmadd_ps(m, _mm256_set1_ps(xb.s), accm[t]);
    }
  }
  for (int t = 0; t < NT; ++t) _mm256_storeu_ps(out + 8 * t, _mm256_add_ps(acc[t], accm[t]));
}

template <typename IntDot, typename Act, int NT>
inline void q8_group(const uint8_t* g, const typename Act::Block* x, int64_t nb, float* out) {
  constexpr size_t kBytes = 16 + 256;
  __m256 acc[NT];
  for (int t = 0; t < NT; ++t) acc[t] = _mm256_setzero_ps();
  for (int64_t b = 0; b < nb; ++b, g += kBytes) {
    prefetch_block<kBytes>(g);
    const __m256 d = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(g)));
    __m256i w[8], aw[8];  // w * x as |w| * (x with w's sign): unsigned times signed
    for (int j = 0; j < 8; ++j) {
      w[j] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(g + 16 + 32 * j));
      aw[j] = _mm256_abs_epi8(w[j]);
    }
    for (int t = 0; t < NT; ++t) {
      const auto& xb = x[t * nb + b];
      const __m256i sum = Act::template bytes<IntDot>(w, aw, xb);
      acc[t] = _mm256_fmadd_ps(_mm256_mul_ps(d, _mm256_set1_ps(xb.d)), _mm256_cvtepi32_ps(sum), acc[t]);
    }
  }
  for (int t = 0; t < NT; ++t) _mm256_storeu_ps(out + 8 * t, acc[t]);
}

// Unsigned 8-bit values of a group's sub-block as 8 chunks: nibbles plus `planes` high bits.
template <int kPlanes>
inline void unpack_sub(const uint8_t* sub, __m256i w[8]) {
  const __m256i low4 = _mm256_set1_epi8(0x0f);
  for (int i = 0; i < 4; ++i) {
    const __m256i p = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(sub + 32 * kPlanes + 32 * i));
    w[i] = _mm256_and_si256(p, low4);
    w[i + 4] = _mm256_and_si256(_mm256_srli_epi16(p, 4), low4);
  }
  if constexpr (kPlanes >= 1) add_fifth_bits(sub, w, 16);
  if constexpr (kPlanes >= 2) add_fifth_bits(sub + 32, w, 32);
}

// 8 small scales of one sub-block (u8, or i8 for Q6_K) as floats.
inline __m256 scales_u8(const uint8_t* p) {
  return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
}
inline __m256 scales_i8(const uint8_t* p) {
  return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
}

// Q4_K/Q5_K/Q6_K rows (packed.hpp): each sub-block as a Q4_1/Q5 block whose row scales are
// d * sc and minimums dmin * mn; Q6_K's weights q - 32 are signed, two scales a sub-block.
template <typename IntDot, typename Act, DType T, int NT>
inline void k_group(const uint8_t* g, const typename Act::Block* x, int64_t nb, float* out) {
  constexpr bool k6 = T == DType::Q6_K;
  constexpr int kPlanes = T == DType::Q4_K ? 0 : T == DType::Q5_K ? 1 : 2;
  constexpr size_t kHeader = k6 ? 144 : 160, kSub = 32 * kPlanes + 128, kSuper = kHeader + 8 * kSub;
  __m256 acc[NT], accm[NT];
  for (int t = 0; t < NT; ++t) acc[t] = accm[t] = _mm256_setzero_ps();
  for (int64_t s = 0; s < nb / 8; ++s, g += kSuper) {
    const __m256 d = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(g)));
    for (int j = 0; j < 8; ++j) {
      const uint8_t* sub = g + kHeader + j * kSub;
      prefetch_block<kSub>(sub);
      __m256i w[8];
      unpack_sub<kPlanes>(sub, w);
      const typename Act::Block* xj = x + 8 * s + j;
      if constexpr (k6) {
        __m256i aw[8];
        for (int i = 0; i < 8; ++i) {
          w[i] = _mm256_sub_epi8(w[i], _mm256_set1_epi8(32));
          aw[i] = _mm256_abs_epi8(w[i]);
        }
        const __m256 s_lo = _mm256_mul_ps(d, scales_i8(g + 16 + 8 * (2 * j)));
        const __m256 s_hi = _mm256_mul_ps(d, scales_i8(g + 16 + 8 * (2 * j + 1)));
        for (int t = 0; t < NT; ++t) {
          const auto& xb = xj[t * nb];
          const __m256 xd = _mm256_set1_ps(xb.d);
          const __m256i lo = Act::template small_bytes4<IntDot>(w, aw, xb, 0);
          const __m256i hi = Act::template small_bytes4<IntDot>(w, aw, xb, 4);
          acc[t] = _mm256_fmadd_ps(_mm256_mul_ps(s_lo, xd), _mm256_cvtepi32_ps(lo), acc[t]);
          acc[t] = _mm256_fmadd_ps(_mm256_mul_ps(s_hi, xd), _mm256_cvtepi32_ps(hi), acc[t]);
        }
      } else {
        const __m256 scale = _mm256_mul_ps(d, scales_u8(g + 32 + 8 * j));
        const __m256 min = _mm256_mul_ps(_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(g + 16))),
                                         scales_u8(g + 96 + 8 * j));
        for (int t = 0; t < NT; ++t) {
          const auto& xb = xj[t * nb];
          const __m256i sum = Act::template nibbles<IntDot, (kPlanes > 0)>(w, xb);
          acc[t] = _mm256_fmadd_ps(_mm256_mul_ps(scale, _mm256_set1_ps(xb.d)), _mm256_cvtepi32_ps(sum), acc[t]);
          accm[t] = _mm256_fnmadd_ps(min, _mm256_set1_ps(xb.s), accm[t]);
        }
      }
    }
  }
  for (int t = 0; t < NT; ++t) _mm256_storeu_ps(out + 8 * t, _mm256_add_ps(acc[t], accm[t]));
}

template <int NT, typename Fn>
inline void for_tokens(int n_tokens, Fn fn) {
  if constexpr (NT > 1) {
    if (n_tokens < NT) return for_tokens<NT - 1>(n_tokens, fn);
  }
  fn(std::integral_constant<int, NT>{});
}

template <typename IntDot, typename Act, DType T>
void packed_group(const uint8_t* group, const typename Act::Block* x, int64_t nb, int n_tokens, float* out) {
  for_tokens<kMaxMultiTokens>(n_tokens, [&](auto nt) {
    if constexpr (T == DType::Q8_0)
      q8_group<IntDot, Act, nt.value>(group, x, nb, out);
    else if constexpr (T == DType::Q4_K || T == DType::Q5_K || T == DType::Q6_K)
      k_group<IntDot, Act, T, nt.value>(group, x, nb, out);
    else
      q4_group<IntDot, Act, T, nt.value>(group, x, nb, out);
  });
}

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
  void packed_q4_k_##isa(const uint8_t* g, const Q8Block* x, int64_t nb, int n, float* out) {              \
    packed_group<IntDot, Int8Activations, DType::Q4_K>(g, x, nb, n, out);                                  \
  }                                                                                                        \
  void packed_q5_k_##isa(const uint8_t* g, const Q8Block* x, int64_t nb, int n, float* out) {              \
    packed_group<IntDot, Int8Activations, DType::Q5_K>(g, x, nb, n, out);                                  \
  }                                                                                                        \
  void packed_q6_k_##isa(const uint8_t* g, const Q8Block* x, int64_t nb, int n, float* out) {              \
    packed_group<IntDot, Int8Activations, DType::Q6_K>(g, x, nb, n, out);                                  \
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
