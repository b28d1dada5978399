// The Vulkan entry points minnow uses, loaded at run time from the system's loader
// (libvulkan.so.1) rather than linked: a minnow without a GPU driver still starts, and an
// app that embeds it does not need the loader to be installed.
#pragma once
#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

namespace minnow::vulkan {

#define MINNOW_VK_INSTANCE_FUNCTIONS(X)                                                            \
  X(vkDestroyInstance) X(vkEnumeratePhysicalDevices) X(vkGetPhysicalDeviceProperties)              \
  X(vkGetPhysicalDeviceProperties2) X(vkGetPhysicalDeviceFeatures2) X(vkGetPhysicalDeviceMemoryProperties) \
  X(vkGetPhysicalDeviceQueueFamilyProperties) X(vkEnumerateDeviceExtensionProperties) X(vkCreateDevice) \
  X(vkGetDeviceProcAddr)

#define MINNOW_VK_DEVICE_FUNCTIONS(X)                                                               \
  X(vkDestroyDevice) X(vkGetDeviceQueue) X(vkDeviceWaitIdle) X(vkQueueSubmit)                        \
  X(vkCreateBuffer) X(vkDestroyBuffer) X(vkGetBufferMemoryRequirements) X(vkBindBufferMemory)        \
  X(vkAllocateMemory) X(vkFreeMemory) X(vkMapMemory) X(vkUnmapMemory)                                \
  X(vkCreateShaderModule) X(vkDestroyShaderModule) X(vkCreateDescriptorSetLayout)                    \
  X(vkDestroyDescriptorSetLayout) X(vkCreatePipelineLayout) X(vkDestroyPipelineLayout)               \
  X(vkCreateComputePipelines) X(vkDestroyPipeline) X(vkCreateDescriptorPool) X(vkDestroyDescriptorPool) \
  X(vkResetDescriptorPool) X(vkAllocateDescriptorSets) X(vkUpdateDescriptorSets)                      \
  X(vkCreateCommandPool) X(vkDestroyCommandPool) X(vkAllocateCommandBuffers) X(vkResetCommandBuffer) \
  X(vkBeginCommandBuffer) X(vkEndCommandBuffer) X(vkCmdBindPipeline) X(vkCmdBindDescriptorSets)       \
  X(vkCmdPushConstants) X(vkCmdDispatch) X(vkCmdPipelineBarrier) X(vkCmdCopyBuffer) X(vkCmdFillBuffer) \
  X(vkCreateFence) X(vkDestroyFence) X(vkWaitForFences) X(vkResetFences)                             \
  X(vkCreateQueryPool) X(vkDestroyQueryPool) X(vkCmdResetQueryPool) X(vkCmdWriteTimestamp) X(vkGetQueryPoolResults)

#define MINNOW_VK_DECLARE(name) PFN_##name name = nullptr;

struct GlobalApi {
  PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr = nullptr;
  PFN_vkCreateInstance vkCreateInstance = nullptr;
  PFN_vkEnumerateInstanceVersion vkEnumerateInstanceVersion = nullptr;  // null on a Vulkan 1.0 loader
};
struct InstanceApi {
  MINNOW_VK_INSTANCE_FUNCTIONS(MINNOW_VK_DECLARE)
};
struct DeviceApi {
  MINNOW_VK_DEVICE_FUNCTIONS(MINNOW_VK_DECLARE)
};

// The loader's global functions, loaded once; throws Error (one line: which library could
// not be opened) where there is no Vulkan loader.
const GlobalApi& global_api();
// Throws Error naming the first function the instance or device does not provide.
InstanceApi load_instance_api(VkInstance instance);
DeviceApi load_device_api(const InstanceApi& ia, VkDevice device);

// "VK_ERROR_OUT_OF_DEVICE_MEMORY" etc. for messages.
const char* result_name(VkResult r);
// Throws Error("vulkan: <what>: <result name>") unless r is VK_SUCCESS.
void check(VkResult r, const char* what);

}  // namespace minnow::vulkan
