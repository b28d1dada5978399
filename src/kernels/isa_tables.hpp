// The per-ISA kernel tables, each defined only where its architecture is compiled
// (kernels/x86, kernels/arm); dispatch.cpp offers the ones the CPU can run.
#pragma once
#include "kernels/ops.hpp"

namespace minnow::kernels {

#if defined(MINNOW_HAVE_X86_KERNELS)
const KernelTable& avx2_kernels();       // AVX2 + FMA + F16C
const KernelTable& avx2_vnni_kernels();  // the same with AVX-VNNI packed kernels
const KernelTable& avx2_avx512vnni_kernels();  // or AVX512-VNNI's vpdpbusd (256-bit, EVEX)
const KernelTable& avx512_kernels();  // that, with 16-row packed kernels on 512-bit registers
const KernelTable& avx512_amx_kernels();  // that, with prompts on AMX tiles
#endif
#if defined(MINNOW_HAVE_ARM_KERNELS)
const KernelTable& neon_kernels();          // armv8.0-a: every 64-bit ARM CPU
const KernelTable& neon_dotprod_kernels();  // + sdot (armv8.2-a FEAT_DotProd)
const KernelTable& neon_i8mm_kernels();     // + smmla for several tokens (armv8.6-a FEAT_I8MM)
#endif

}  // namespace minnow::kernels
