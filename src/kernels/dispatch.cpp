#include <cstdlib>
#include <cstring>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "kernels/ops.hpp"

namespace minnow::kernels {

#if !defined(MINNOW_HAVE_X86_KERNELS)
const KernelTable* x86_kernels() { return nullptr; }
#endif

namespace {
bool cpu_has_avx2_fma_f16c() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  // F16C is CPUID leaf 1, ECX bit 29 (read directly: not every compiler names it here).
  unsigned a = 0, b = 0, c = 0, d = 0;
  const bool f16c = __get_cpuid(1, &a, &b, &c, &d) && (c & (1u << 29));
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && f16c;
#else
  return false;
#endif
}

const KernelTable& choose() {
  const char* force = std::getenv("MINNOW_FORCE_SCALAR");
  bool forced_scalar = force && std::strcmp(force, "0") != 0 && *force;
  if (!forced_scalar && x86_kernels() && cpu_has_avx2_fma_f16c()) return *x86_kernels();
  return ref_kernels();
}
}  // namespace

const KernelTable& active() {
  static const KernelTable& table = choose();
  return table;
}

}  // namespace minnow::kernels
