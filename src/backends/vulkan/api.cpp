#include "backends/vulkan/api.hpp"

#include <dlfcn.h>

#include <mutex>
#include <string>

#include "base/error.hpp"

namespace minnow::vulkan {

const GlobalApi& global_api() {
  static GlobalApi api;
  static std::string failure;
  static std::once_flag once;
  std::call_once(once, [] {
    // Linux and Android name the loader differently; neither is ever unloaded.
    void* lib = nullptr;
    for (const char* name : {"libvulkan.so.1", "libvulkan.so"})
      if ((lib = dlopen(name, RTLD_NOW | RTLD_LOCAL)) != nullptr) break;
    if (lib == nullptr) {
      failure = "vulkan: no Vulkan loader (libvulkan.so.1) on this system: install one (Debian: libvulkan1 and a driver "
                "such as mesa-vulkan-drivers) or use --backend cpu";
      return;
    }
    api.vkGetInstanceProcAddr = reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(lib, "vkGetInstanceProcAddr"));
    if (api.vkGetInstanceProcAddr == nullptr) {
      failure = "vulkan: the Vulkan loader has no vkGetInstanceProcAddr";
      return;
    }
    api.vkCreateInstance =
        reinterpret_cast<PFN_vkCreateInstance>(api.vkGetInstanceProcAddr(nullptr, "vkCreateInstance"));
    api.vkEnumerateInstanceVersion =
        reinterpret_cast<PFN_vkEnumerateInstanceVersion>(api.vkGetInstanceProcAddr(nullptr, "vkEnumerateInstanceVersion"));
    if (api.vkCreateInstance == nullptr) failure = "vulkan: the Vulkan loader has no vkCreateInstance";
  });
  if (!failure.empty()) throw Error(failure);
  return api;
}

InstanceApi load_instance_api(VkInstance instance) {
  InstanceApi ia;
  const auto get = global_api().vkGetInstanceProcAddr;
#define MINNOW_VK_LOAD(name)                                                       \
  ia.name = reinterpret_cast<PFN_##name>(get(instance, #name));                    \
  if (ia.name == nullptr) throw Error("vulkan: the Vulkan instance lacks " #name " (Vulkan 1.1 or newer is needed)");
  MINNOW_VK_INSTANCE_FUNCTIONS(MINNOW_VK_LOAD)
#undef MINNOW_VK_LOAD
  return ia;
}

DeviceApi load_device_api(const InstanceApi& ia, VkDevice device) {
  DeviceApi da;
#define MINNOW_VK_LOAD(name)                                                       \
  da.name = reinterpret_cast<PFN_##name>(ia.vkGetDeviceProcAddr(device, #name));    \
  if (da.name == nullptr) throw Error("vulkan: the Vulkan device lacks " #name);
  MINNOW_VK_DEVICE_FUNCTIONS(MINNOW_VK_LOAD)
#undef MINNOW_VK_LOAD
  return da;
}

const char* result_name(VkResult r) {
  switch (r) {
    case VK_SUCCESS: return "VK_SUCCESS";
    case VK_NOT_READY: return "VK_NOT_READY";
    case VK_TIMEOUT: return "VK_TIMEOUT";
    case VK_ERROR_OUT_OF_HOST_MEMORY: return "VK_ERROR_OUT_OF_HOST_MEMORY";
    case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
    case VK_ERROR_INITIALIZATION_FAILED: return "VK_ERROR_INITIALIZATION_FAILED";
    case VK_ERROR_DEVICE_LOST: return "VK_ERROR_DEVICE_LOST";
    case VK_ERROR_MEMORY_MAP_FAILED: return "VK_ERROR_MEMORY_MAP_FAILED";
    case VK_ERROR_LAYER_NOT_PRESENT: return "VK_ERROR_LAYER_NOT_PRESENT";
    case VK_ERROR_EXTENSION_NOT_PRESENT: return "VK_ERROR_EXTENSION_NOT_PRESENT";
    case VK_ERROR_FEATURE_NOT_PRESENT: return "VK_ERROR_FEATURE_NOT_PRESENT";
    case VK_ERROR_INCOMPATIBLE_DRIVER: return "VK_ERROR_INCOMPATIBLE_DRIVER (no Vulkan driver found)";
    case VK_ERROR_TOO_MANY_OBJECTS: return "VK_ERROR_TOO_MANY_OBJECTS";
    case VK_ERROR_OUT_OF_POOL_MEMORY: return "VK_ERROR_OUT_OF_POOL_MEMORY";
    default: return "VkResult error";
  }
}

void check(VkResult r, const char* what) {
  if (r != VK_SUCCESS) throw Error(std::string("vulkan: ") + what + ": " + result_name(r));
}

}  // namespace minnow::vulkan
