// Packed-row kernels for AVX-VNNI (VEX vpdpbusd). Built with -mavxvnni; only reached after
// dispatch.cpp's CPUID check.
#include "kernels/x86/packed_dpbusd.hpp"

namespace minnow::kernels {
namespace {

struct AvxVnni {
  static __m256i dp(__m256i acc, __m256i u, __m256i s) { return _mm256_dpbusd_avx_epi32(acc, u, s); }
};

}  // namespace

MINNOW_DEFINE_PACKED_KERNELS(vnni, Dpbusd<AvxVnni>)

}  // namespace minnow::kernels
