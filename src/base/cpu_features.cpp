#include "base/cpu_features.hpp"

#if defined(__x86_64__)
#include <cpuid.h>
#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif
#elif defined(__aarch64__) && defined(__APPLE__)
#include <sys/sysctl.h>
#elif defined(__aarch64__)
#include <sys/auxv.h>  // getauxval: glibc, musl and Android's bionic (API 18+)
#endif

namespace minnow {
namespace {

#if defined(__aarch64__) && defined(__APPLE__)
bool sysctl_flag(const char* name) {
  int v = 0;
  size_t size = sizeof v;
  return sysctlbyname(name, &v, &size, nullptr, 0) == 0 && v != 0;
}
#endif

#if defined(__x86_64__)
// AMX: CPUID leaf 7 EDX bits 24 (tiles) and 25 (int8), the OS saving the tile state (XCR0
// bits 17 and 18), and on Linux the per-process permission for the large tile state, which
// the kernel may refuse (then the tiles fault: no AMX).
bool amx_usable() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d) || !(d & (1u << 24)) || !(d & (1u << 25))) return false;
  if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 27))) return false;  // OSXSAVE: xgetbv works
  unsigned lo = 0, hi = 0;
  __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  if ((lo & (3u << 17)) != (3u << 17)) return false;
#if defined(__linux__)
  constexpr long kReqXcompPerm = 0x1023, kXtiledata = 18;
  return syscall(SYS_arch_prctl, kReqXcompPerm, kXtiledata) == 0;
#else
  return false;  // other systems' permission protocols are not wired up
#endif
}
#endif

CpuFeatures detect() {
  CpuFeatures f;
#if defined(__x86_64__)
  __builtin_cpu_init();
  unsigned a = 0, b = 0, c = 0, d = 0;
  // F16C is CPUID leaf 1, ECX bit 29 (read directly: not every compiler names it).
  const bool f16c = __get_cpuid(1, &a, &b, &c, &d) && (c & (1u << 29));
  f.avx2_fma_f16c = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && f16c;
  // AVX-VNNI is CPUID leaf 7, sub-leaf 1, EAX bit 4 (GCC 12's __builtin_cpu_supports misses it).
  f.avx_vnni = f.avx2_fma_f16c && __get_cpuid_count(7, 1, &a, &b, &c, &d) && (a & (1u << 4));
  // __builtin_cpu_supports also checks that the OS saves the AVX-512 state (XCR0).
  f.avx512_vnni = f.avx2_fma_f16c && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                  __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni");
  // AVX512-BF16 is CPUID leaf 7, sub-leaf 1, EAX bit 5.
  f.avx512_bf16 = f.avx512_vnni && __get_cpuid_count(7, 1, &a, &b, &c, &d) && (a & (1u << 5));
  f.amx_int8 = f.avx512_vnni && amx_usable();
#elif defined(__aarch64__) && defined(__APPLE__)
  f.neon = true;
  f.dotprod = sysctl_flag("hw.optional.arm.FEAT_DotProd");
  f.i8mm = sysctl_flag("hw.optional.arm.FEAT_I8MM");
  f.fp16 = sysctl_flag("hw.optional.arm.FEAT_FP16");
#elif defined(__aarch64__)
  // The bits from the Linux uapi (asm/hwcap.h), spelled out because older headers (old
  // NDKs, old glibc) lack the newer names.
  constexpr unsigned long kHwcapFphp = 1ul << 9, kHwcapAsimdhp = 1ul << 10, kHwcapAsimddp = 1ul << 20;
  constexpr unsigned long kHwcap2I8mm = 1ul << 13;
  const unsigned long hw = getauxval(AT_HWCAP), hw2 = getauxval(AT_HWCAP2);
  f.neon = true;
  f.dotprod = (hw & kHwcapAsimddp) != 0;
  f.fp16 = (hw & kHwcapFphp) && (hw & kHwcapAsimdhp);
  f.i8mm = (hw2 & kHwcap2I8mm) != 0;
#endif
  return f;
}

}  // namespace

const CpuFeatures& cpu_features() {
  static const CpuFeatures f = detect();
  return f;
}

}  // namespace minnow
