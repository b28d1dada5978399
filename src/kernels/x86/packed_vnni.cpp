// Packed-row decode kernels for AVX-VNNI: vpdpbusd multiplies unsigned by signed bytes and
// adds each lane's four products straight into int32. Built with -mavxvnni; only reached
// after dispatch.cpp's CPUID check.
#include "kernels/x86/packed_dot.hpp"

namespace minnow::kernels {
namespace {

// Two accumulators halve the chain of dependent vpdpbusd (5 cycles each).
template <typename Operand>
inline __m256i dot8(const __m256i u[8], Operand s) {
  __m256i a = _mm256_setzero_si256(), b = _mm256_setzero_si256();
  for (int j = 0; j < 8; j += 2) {
    a = _mm256_dpbusd_avx_epi32(a, u[j], s(j));
    b = _mm256_dpbusd_avx_epi32(b, u[j + 1], s(j + 1));
  }
  return _mm256_add_epi32(a, b);
}

struct Dpbusd {
  template <bool>  // vpdpbusd adds in int32: 4- and 5-bit weights alike
  static __m256i nibble_dot(const __m256i w[8], const int8_t* q) {
    return dot8(w, [q](int j) { return broadcast4(q, j); });
  }
  static __m256i signed_dot(const __m256i aw[8], const __m256i sx[8]) {
    return dot8(aw, [sx](int j) { return sx[j]; });
  }
  static __m256i small_signed_dot4(const __m256i aw[4], const __m256i sx[4]) {
    const __m256i a = _mm256_dpbusd_avx_epi32(_mm256_dpbusd_avx_epi32(_mm256_setzero_si256(), aw[0], sx[0]), aw[1], sx[1]);
    const __m256i b = _mm256_dpbusd_avx_epi32(_mm256_dpbusd_avx_epi32(_mm256_setzero_si256(), aw[2], sx[2]), aw[3], sx[3]);
    return _mm256_add_epi32(a, b);
  }
};

}  // namespace

MINNOW_DEFINE_PACKED_KERNELS(vnni, Dpbusd)

}  // namespace minnow::kernels
