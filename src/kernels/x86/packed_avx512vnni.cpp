// Packed-row kernels for CPUs with AVX512-VNNI but not AVX-VNNI (AMD Zen 4, Intel Ice Lake
// and Cascade Lake): the same vpdpbusd on 256-bit registers, EVEX-encoded (AVX512VL). Built
// with -mavx512vnni -mavx512vl; only reached after dispatch.cpp's CPUID check.
#include "kernels/x86/packed_dpbusd.hpp"

namespace minnow::kernels {
namespace {

struct Avx512Vnni {
  static __m256i dp(__m256i acc, __m256i u, __m256i s) { return _mm256_dpbusd_epi32(acc, u, s); }
};

}  // namespace

MINNOW_DEFINE_PACKED_KERNELS(avx512vnni, Dpbusd<Avx512Vnni>)

}  // namespace minnow::kernels
