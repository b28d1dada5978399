// minnow devices: what minnow can run on here: the CPU (its kernel table) and every
// Vulkan device, with the facts its kernels choose by.
#include <cstdio>
#include <string>
#include <thread>

#include "cli/common.hpp"
#include "kernels/ops.hpp"
#if MINNOW_HAVE_VULKAN
#include "backends/vulkan/device.hpp"
#endif

namespace minnow::cli {
namespace {

#if MINNOW_HAVE_VULKAN
std::string features(const vulkan::DeviceInfo& d) {
  std::string f;
  auto add = [&f](bool on, const char* name) {
    if (on) f += f.empty() ? name : std::string(", ") + name;
  };
  add(d.subgroup_arithmetic, "subgroup arithmetic");
  add(d.subgroup_clustered, "subgroup clusters");
  add(d.fp16, "fp16");
  add(d.int8, "int8");
  add(d.storage16, "16-bit storage");
  add(d.storage8, "8-bit storage");
  add(d.integer_dot_product, "integer dot product");
  add(d.cooperative_matrix, "cooperative matrix");
  add(d.nv_cooperative_matrix, "NV cooperative matrix (prompt matmuls on the tensor cores)");
  return f.empty() ? "none" : f;
}
#endif

}  // namespace

void register_devices(CLI::App& app) {
  auto* cmd = app.add_subcommand("devices", "List the CPU and the GPUs (Vulkan) minnow can run on");
  cmd->footer(
      "GPUs are listed through the system's Vulkan loader and drivers (Debian: libvulkan1 and\n"
      "mesa-vulkan-drivers for Mesa's drivers, lavapipe included; NVIDIA's driver brings its own).\n"
      "The number before each GPU is what --device takes.");
  cmd->callback([] {
    std::printf("cpu: %u threads, kernels %s\n", std::thread::hardware_concurrency(), kernels::active().name);
#if MINNOW_HAVE_VULKAN
    std::vector<vulkan::DeviceInfo> devs;
    try {
      devs = vulkan::list_devices();
    } catch (const std::exception& e) {
      std::printf("vulkan: none (%s)\n", e.what());  // a listing, not a failure: the CPU is there
      return;
    }
    if (devs.empty()) std::printf("vulkan: none (the driver reports no device)\n");
    for (const vulkan::DeviceInfo& d : devs) {
      std::printf("vulkan %d: %s (%s), %.1f GiB device memory, Vulkan %s%s%s\n", d.index, d.name.c_str(),
                  d.kind.c_str(), static_cast<double>(d.device_local_bytes) / (1ull << 30), d.api_version.c_str(),
                  d.driver.empty() ? "" : ", driver ", d.driver.c_str());
      std::printf("  subgroup size %u, %u KiB shared memory; %s\n", d.subgroup_size, d.max_shared_bytes / 1024,
                  features(d).c_str());
    }
#else
    std::printf("vulkan: not in this build (it needs libvulkan-dev and glslc at build time)\n");
#endif
  });
}

}  // namespace minnow::cli
