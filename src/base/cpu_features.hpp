// What the CPU can run, read once from CPUID (x86-64) or the kernel's HWCAP bits (aarch64
// Linux and Android; sysctl on Apple).
#pragma once

namespace minnow {

struct CpuFeatures {
  // x86-64
  bool avx2_fma_f16c = false;  // the AVX2 kernels' baseline
  bool avx_vnni = false;
  bool avx512_vnni = false;  // with AVX-512 F, BW and VL (every CPU with VNNI has them)
  bool avx512_bf16 = false;  // vdpbf16ps (Cooper Lake, Sapphire Rapids, Zen 4), with F, BW and VL
  // AMX tiles with int8 products (Sapphire Rapids and later), with AVX-512 VNNI, and Linux's
  // permission to use them granted to this process (arch_prctl ARCH_REQ_XCOMP_PERM).
  bool amx_int8 = false;
  // aarch64 (NEON itself is part of every aarch64 CPU)
  bool neon = false;
  bool dotprod = false;  // sdot/udot (armv8.2-a FEAT_DotProd)
  bool i8mm = false;     // smmla (armv8.6-a FEAT_I8MM)
  bool fp16 = false;     // half-precision arithmetic (FEAT_FP16)
};

const CpuFeatures& cpu_features();

}  // namespace minnow
