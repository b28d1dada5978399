#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <vector>

#include "base/cpu_features.hpp"
#include "kernels/isa_tables.hpp"
#include "kernels/ops.hpp"

namespace minnow::kernels {
namespace {

bool env_set(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::strcmp(v, "0") != 0;
}

std::vector<const KernelTable*> runnable_tables() {
  [[maybe_unused]] const CpuFeatures& cpu = cpu_features();
  std::vector<const KernelTable*> v;
#if defined(MINNOW_HAVE_X86_KERNELS)
  if (cpu.avx2_fma_f16c) v.push_back(&avx2_kernels());
  // The last is preferred.
  if (cpu.avx512_vnni) v.push_back(&avx2_avx512vnni_kernels());
  if (cpu.avx_vnni) v.push_back(&avx2_vnni_kernels());
  if (cpu.avx512_vnni) v.push_back(&avx512_kernels());
  if (cpu.amx_int8) v.push_back(&avx512_amx_kernels());
#endif
#if defined(MINNOW_HAVE_ARM_KERNELS)
  if (cpu.neon) v.push_back(&neon_kernels());
  if (cpu.dotprod) v.push_back(&neon_dotprod_kernels());
  if (cpu.dotprod && cpu.i8mm) v.push_back(&neon_i8mm_kernels());
#endif
  return v;
}

const KernelTable& choose() {
  if (env_set("MINNOW_FORCE_SCALAR")) return ref_kernels();
  if (const char* name = std::getenv("MINNOW_KERNELS"); name && *name) {
    if (const KernelTable* t = kernels_named(name)) return *t;
    std::fprintf(stderr, "minnow: MINNOW_KERNELS=%s is not a kernel table this CPU runs; using the best one\n", name);
  }
  auto simd = simd_kernels();
  for (size_t i = simd.size(); i-- > 0;) {
    if (env_set("MINNOW_NO_VNNI") && std::strstr(simd[i]->name, "vnni")) continue;
    return *simd[i];
  }
  return ref_kernels();
}

}  // namespace

std::span<const KernelTable* const> simd_kernels() {
  static const std::vector<const KernelTable*> tables = runnable_tables();
  return tables;
}

const KernelTable* kernels_named(std::string_view name) {
  if (name == ref_kernels().name) return &ref_kernels();
  for (const KernelTable* t : simd_kernels())
    if (name == t->name) return t;
  return nullptr;
}

const KernelTable& active() {
  static const KernelTable& table = choose();
  return table;
}

}  // namespace minnow::kernels
