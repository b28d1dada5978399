#include <cstdlib>
#include <cstring>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "kernels/ops.hpp"

namespace minnow::kernels {

#if !defined(MINNOW_HAVE_X86_KERNELS)
const KernelTable* x86_kernels() { return nullptr; }
const KernelTable* x86_vnni_kernels() { return nullptr; }
#endif

bool cpu_has_x86_kernels() {
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

bool cpu_has_avx_vnni() {
#if defined(__x86_64__)
  // AVX-VNNI is CPUID leaf 7, sub-leaf 1, EAX bit 4 (GCC 12's __builtin_cpu_supports misses it).
  unsigned a = 0, b = 0, c = 0, d = 0;
  return cpu_has_x86_kernels() && __get_cpuid_count(7, 1, &a, &b, &c, &d) && (a & (1u << 4));
#else
  return false;
#endif
}

namespace {
bool env_set(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::strcmp(v, "0") != 0;
}

const KernelTable& choose() {
  if (env_set("MINNOW_FORCE_SCALAR") || !x86_kernels() || !cpu_has_x86_kernels()) return ref_kernels();
  if (x86_vnni_kernels() && cpu_has_avx_vnni() && !env_set("MINNOW_NO_VNNI")) return *x86_vnni_kernels();
  return *x86_kernels();
}
}  // namespace

const KernelTable& active() {
  static const KernelTable& table = choose();
  return table;
}

}  // namespace minnow::kernels
