// A Vulkan device for compute: the instance, one compute queue, buffers, and the facts the
// kernels choose by (subgroup size, 16-bit and 8-bit arithmetic, integer dot products,
// cooperative matrices).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backends/vulkan/api.hpp"

namespace minnow::vulkan {

struct DeviceInfo {
  int index = 0;
  std::string name;
  std::string kind;  // "discrete GPU", "integrated GPU", "virtual GPU", "CPU", "other"
  std::string api_version;  // "1.3.230"
  std::string driver;       // driver name and version, where the driver says
  uint32_t vendor_id = 0, device_id = 0;
  uint64_t device_local_bytes = 0;  // the largest device-local heap
  uint32_t subgroup_size = 0;
  uint32_t max_shared_bytes = 0;    // compute shared memory per workgroup
  float timestamp_ns = 0;           // nanoseconds a timestamp tick; 0: no timestamps on compute queues
  bool subgroup_arithmetic = false;
  bool subgroup_clustered = false;  // clustered reductions (subgroupClusteredAdd)
  bool fp16 = false;                // shaderFloat16
  bool int8 = false;                // shaderInt8
  bool storage16 = false, storage8 = false;
  bool integer_dot_product = false;  // VK_KHR_shader_integer_dot_product
  bool cooperative_matrix = false;   // VK_KHR_cooperative_matrix
  // VK_NV_cooperative_matrix with 16 x 16 x 16 products of halves summed in floats on 32-lane
  // subgroups (the tensor cores of NVIDIA GPUs): what matmul_coop.comp needs.
  bool nv_cooperative_matrix = false;
};

// Every device of the system's Vulkan drivers. Throws Error (one line) when there is no
// loader or the instance cannot be created; an empty list means a driver with no device.
std::vector<DeviceInfo> list_devices();

enum class Memory {
  Device,    // device-local: weights, activations, the KV cache
  Readback,  // host-visible and cached: results read by the CPU
  Upload,    // host-visible: staging for uploads
};

class Device;

// A buffer and its memory, freed with it. Mapped when its memory is host-visible.
class Buffer {
 public:
  Buffer() = default;
  Buffer(Buffer&& o) noexcept { *this = std::move(o); }
  Buffer& operator=(Buffer&& o) noexcept;
  ~Buffer();
  VkBuffer handle() const { return buffer_; }
  size_t size() const { return size_; }
  void* mapped() const { return mapped_; }

 private:
  friend class Device;
  Device* owner_ = nullptr;
  VkBuffer buffer_ = VK_NULL_HANDLE;
  VkDeviceMemory memory_ = VK_NULL_HANDLE;
  size_t size_ = 0;
  void* mapped_ = nullptr;
};

class Device {
 public:
  // Device `index` of list_devices(); throws Error naming what is missing.
  static std::unique_ptr<Device> open(int index = 0);
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  const DeviceInfo& info() const { return info_; }
  const DeviceApi& api() const { return api_; }
  VkDevice handle() const { return device_; }
  VkQueue queue() const { return queue_; }
  uint32_t queue_family() const { return queue_family_; }
  // MINNOW_VULKAN_KERNEL_STATS=1 where the driver has VK_KHR_pipeline_executable_properties:
  // the compiler's statistics of each kernel (registers, ...) printed as it is built.
  bool kernel_stats() const { return stats_properties_ != nullptr; }
  PFN_vkGetPipelineExecutablePropertiesKHR stats_properties_fn() const { return stats_properties_; }
  PFN_vkGetPipelineExecutableStatisticsKHR stats_fn() const { return stats_; }

  // bytes rounded up to 4 (shaders read 32-bit words). Throws Error when out of memory.
  Buffer alloc(size_t bytes, Memory use);
  // Copies bytes into dst at offset (through a staging buffer when dst is not mapped) /
  // out of src, and waits.
  void upload(Buffer& dst, const void* src, size_t bytes, size_t offset = 0);
  void download(const Buffer& src, void* dst, size_t bytes, size_t offset = 0);
  // Fills b with zero bytes, and waits.
  void zero(Buffer& b);

 private:
  friend class Buffer;
  Device() = default;
  void free(Buffer& b);
  uint32_t memory_type(uint32_t type_bits, Memory use) const;
  void copy_and_wait(VkBuffer src, size_t src_offset, VkBuffer dst, size_t dst_offset, size_t bytes);
  // Records one command with `record` into a command buffer of its own, runs it and waits.
  void run_one(const std::function<void(VkCommandBuffer)>& record);

  DeviceInfo info_;
  InstanceApi iapi_{};
  DeviceApi api_{};
  VkInstance instance_ = VK_NULL_HANDLE;
  VkPhysicalDevice physical_ = VK_NULL_HANDLE;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  uint32_t queue_family_ = 0;
  VkPhysicalDeviceMemoryProperties memory_{};
  VkCommandPool copy_pool_ = VK_NULL_HANDLE;
  VkCommandBuffer copy_cmd_ = VK_NULL_HANDLE;
  VkFence copy_fence_ = VK_NULL_HANDLE;
  PFN_vkGetPipelineExecutablePropertiesKHR stats_properties_ = nullptr;
  PFN_vkGetPipelineExecutableStatisticsKHR stats_ = nullptr;
};

}  // namespace minnow::vulkan
