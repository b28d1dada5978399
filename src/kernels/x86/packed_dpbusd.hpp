// The packed kernels' integer dot over vpdpbusd (unsigned by signed bytes, each lane's four
// products added straight into int32), for either encoding: AVX-VNNI's (VEX) or
// AVX512-VNNI's on 256-bit registers (EVEX, AVX512VL). Each including file is compiled for
// its own instruction set and passes the intrinsic in.
#pragma once
#include "kernels/x86/packed_dot.hpp"

namespace minnow::kernels {
namespace {

template <typename Dp>
struct Dpbusd {
  // Two accumulators halve the chain of dependent vpdpbusd (5 cycles each).
  template <typename Operand>
  static __m256i dot8(const __m256i u[8], Operand s) {
    __m256i a = _mm256_setzero_si256(), b = _mm256_setzero_si256();
    for (int j = 0; j < 8; j += 2) {
      a = Dp::dp(a, u[j], s(j));
      b = Dp::dp(b, u[j + 1], s(j + 1));
    }
    return _mm256_add_epi32(a, b);
  }
  template <bool>  // vpdpbusd adds in int32: 4- and 5-bit weights alike
  static __m256i nibble_dot(const __m256i w[8], const int8_t* q) {
    return dot8(w, [q](int j) { return broadcast4(q, j); });
  }
  static __m256i signed_dot(const __m256i aw[8], const __m256i sx[8]) {
    return dot8(aw, [sx](int j) { return sx[j]; });
  }
  static __m256i small_signed_dot4(const __m256i aw[4], const __m256i sx[4]) {
    const __m256i z = _mm256_setzero_si256();
    return _mm256_add_epi32(Dp::dp(Dp::dp(z, aw[0], sx[0]), aw[1], sx[1]), Dp::dp(Dp::dp(z, aw[2], sx[2]), aw[3], sx[3]));
  }
};

}  // namespace
}  // namespace minnow::kernels
