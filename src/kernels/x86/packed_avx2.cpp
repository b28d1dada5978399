// Packed-row decode kernels for AVX2: vpmaddubsw multiplies unsigned by signed bytes into
// int16 pair sums, vpmaddwd widens them to int32.
#include "kernels/x86/packed_dot.hpp"

namespace minnow::kernels {
namespace {

struct Maddubs {
  static __m256i widen(__m256i pairs) { return _mm256_madd_epi16(pairs, _mm256_set1_epi16(1)); }
  // Nibbles times int8: every pair sum is at most 2 * 15 * 127, so the 8 chunks add up in
  // int16 (8 * 3810 < 32768) and are widened once; 5-bit weights (2 * 31 * 127 = 7874),
  // 4 chunks at a time.
  template <bool k5>
  static __m256i nibble_dot(const __m256i w[8], const int8_t* q) {
    constexpr int kRun = k5 ? 4 : 8;
    __m256i total = _mm256_setzero_si256();
    for (int j0 = 0; j0 < 8; j0 += kRun) {
      __m256i s = _mm256_maddubs_epi16(w[j0], broadcast4(q, j0));
      for (int j = j0 + 1; j < j0 + kRun; ++j) s = _mm256_add_epi16(s, _mm256_maddubs_epi16(w[j], broadcast4(q, j)));
      total = _mm256_add_epi32(total, widen(s));
    }
    return total;
  }
  // |w| <= 128 times |x| <= 127: pair sums fit int16 (32512), sums of two would not.
  static __m256i signed_dot(const __m256i aw[8], const __m256i sx[8]) {
    __m256i s = widen(_mm256_maddubs_epi16(aw[0], sx[0]));
    for (int j = 1; j < 8; ++j) s = _mm256_add_epi32(s, widen(_mm256_maddubs_epi16(aw[j], sx[j])));
    return s;
  }
  // |w| <= 32: four pair sums of at most 2 * 32 * 127 still fit int16 (32512).
  static __m256i small_signed_dot4(const __m256i aw[4], const __m256i sx[4]) {
    __m256i s = _mm256_maddubs_epi16(aw[0], sx[0]);
    for (int j = 1; j < 4; ++j) s = _mm256_add_epi16(s, _mm256_maddubs_epi16(aw[j], sx[j]));
    return widen(s);
  }
};

}  // namespace

MINNOW_DEFINE_PACKED_KERNELS(avx2, Maddubs)

}  // namespace minnow::kernels
