#include "backends/vulkan/device.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "base/error.hpp"

namespace minnow::vulkan {
namespace {

std::string version_text(uint32_t v) {
  return std::to_string(VK_API_VERSION_MAJOR(v)) + "." + std::to_string(VK_API_VERSION_MINOR(v)) + "." +
         std::to_string(VK_API_VERSION_PATCH(v));
}

const char* kind_text(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete GPU";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated GPU";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual GPU";
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return "CPU";
    default: return "other";
  }
}

// An instance and its functions, destroyed with it (or handed over to a Device).
struct Instance {
  VkInstance handle = VK_NULL_HANDLE;
  InstanceApi api{};
  Instance() {
    const GlobalApi& g = global_api();
    uint32_t loader_version = VK_API_VERSION_1_0;
    if (g.vkEnumerateInstanceVersion != nullptr) g.vkEnumerateInstanceVersion(&loader_version);
    if (loader_version < VK_API_VERSION_1_1)
      throw Error("vulkan: the Vulkan loader is version " + version_text(loader_version) + ": 1.1 or newer is needed");
    VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.pApplicationName = "minnow";
    app.pEngineName = "minnow";
    app.apiVersion = std::min<uint32_t>(loader_version, VK_API_VERSION_1_3);
    VkInstanceCreateInfo ci{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    ci.pApplicationInfo = &app;
    check(g.vkCreateInstance(&ci, nullptr, &handle), "creating the instance");
    try {
      api = load_instance_api(handle);
    } catch (...) {
      destroy();
      throw;
    }
  }
  ~Instance() { destroy(); }
  void destroy() {
    if (handle == VK_NULL_HANDLE) return;
    auto destroy_fn = reinterpret_cast<PFN_vkDestroyInstance>(global_api().vkGetInstanceProcAddr(handle, "vkDestroyInstance"));
    if (destroy_fn != nullptr) destroy_fn(handle, nullptr);
    handle = VK_NULL_HANDLE;
  }
  VkInstance release() { return std::exchange(handle, VK_NULL_HANDLE); }
  std::vector<VkPhysicalDevice> physical_devices() const {
    uint32_t n = 0;
    check(api.vkEnumeratePhysicalDevices(handle, &n, nullptr), "listing devices");
    std::vector<VkPhysicalDevice> devs(n);
    check(api.vkEnumeratePhysicalDevices(handle, &n, devs.data()), "listing devices");
    devs.resize(n);
    return devs;
  }
};

bool has_extension(const InstanceApi& ia, VkPhysicalDevice pd, const char* name) {
  uint32_t n = 0;
  if (ia.vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, nullptr) != VK_SUCCESS) return false;
  std::vector<VkExtensionProperties> exts(n);
  if (ia.vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, exts.data()) != VK_SUCCESS) return false;
  for (uint32_t i = 0; i < n; ++i)
    if (std::strcmp(exts[i].extensionName, name) == 0) return true;
  return false;
}

// Whether the driver lists 16 x 16 x 16 f16 x f16 + f32 -> f32 subgroup products
// (VK_NV_cooperative_matrix).
bool nv_coopmat_f16(VkInstance instance, VkPhysicalDevice pd) {
  auto list = reinterpret_cast<PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesNV>(
      global_api().vkGetInstanceProcAddr(instance, "vkGetPhysicalDeviceCooperativeMatrixPropertiesNV"));
  if (list == nullptr) return false;
  uint32_t n = 0;
  if (list(pd, &n, nullptr) != VK_SUCCESS) return false;
  std::vector<VkCooperativeMatrixPropertiesNV> props(n, {VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_NV});
  if (list(pd, &n, props.data()) != VK_SUCCESS) return false;
  for (uint32_t i = 0; i < n; ++i) {
    const VkCooperativeMatrixPropertiesNV& c = props[i];
    if (c.MSize == 16 && c.NSize == 16 && c.KSize == 16 && c.AType == VK_COMPONENT_TYPE_FLOAT16_NV &&
        c.BType == VK_COMPONENT_TYPE_FLOAT16_NV && c.CType == VK_COMPONENT_TYPE_FLOAT32_NV &&
        c.DType == VK_COMPONENT_TYPE_FLOAT32_NV && c.scope == VK_SCOPE_SUBGROUP_NV)
      return true;
  }
  return false;
}

DeviceInfo describe(VkInstance instance, const InstanceApi& ia, VkPhysicalDevice pd, int index) {
  DeviceInfo info;
  info.index = index;
  VkPhysicalDeviceProperties props{};
  ia.vkGetPhysicalDeviceProperties(pd, &props);
  info.name = props.deviceName;
  info.kind = kind_text(props.deviceType);
  info.api_version = version_text(props.apiVersion);
  info.vendor_id = props.vendorID;
  info.device_id = props.deviceID;
  info.max_shared_bytes = props.limits.maxComputeSharedMemorySize;
  info.timestamp_ns = props.limits.timestampComputeAndGraphics ? props.limits.timestampPeriod : 0.0f;

  VkPhysicalDeviceSubgroupProperties subgroup{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  VkPhysicalDeviceDriverProperties driver{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
  VkPhysicalDeviceProperties2 props2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  props2.pNext = &subgroup;
  const bool v12 = props.apiVersion >= VK_API_VERSION_1_2;
  if (v12) subgroup.pNext = &driver;
  ia.vkGetPhysicalDeviceProperties2(pd, &props2);
  info.subgroup_size = subgroup.subgroupSize;
  info.subgroup_arithmetic = (subgroup.supportedOperations & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT) != 0 &&
                             (subgroup.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) != 0;
  info.subgroup_clustered = info.subgroup_arithmetic && (subgroup.supportedOperations & VK_SUBGROUP_FEATURE_CLUSTERED_BIT) != 0;
  if (v12) info.driver = std::string(driver.driverName) + (driver.driverInfo[0] ? std::string(" ") + driver.driverInfo : "");

  VkPhysicalDevice16BitStorageFeatures s16{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceCooperativeMatrixFeaturesNV nvcm{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
  const bool has_nvcm = has_extension(ia, pd, "VK_NV_cooperative_matrix");
  VkPhysicalDeviceFeatures2 feats{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  feats.pNext = &s16;
  if (v12) s16.pNext = &f12;
  if (v12 && has_nvcm) f12.pNext = &nvcm;
  ia.vkGetPhysicalDeviceFeatures2(pd, &feats);
  info.storage16 = s16.storageBuffer16BitAccess;
  info.fp16 = v12 && f12.shaderFloat16;
  info.int8 = v12 && f12.shaderInt8;
  info.storage8 = v12 && f12.storageBuffer8BitAccess;
  info.integer_dot_product = props.apiVersion >= VK_API_VERSION_1_3 || has_extension(ia, pd, "VK_KHR_shader_integer_dot_product");
  info.cooperative_matrix = has_extension(ia, pd, "VK_KHR_cooperative_matrix");
  info.nv_cooperative_matrix = has_nvcm && nvcm.cooperativeMatrix && info.fp16 && info.subgroup_size == 32 &&
                               nv_coopmat_f16(instance, pd);

  VkPhysicalDeviceMemoryProperties mem{};
  ia.vkGetPhysicalDeviceMemoryProperties(pd, &mem);
  for (uint32_t h = 0; h < mem.memoryHeapCount; ++h)
    if (mem.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)
      info.device_local_bytes = std::max<uint64_t>(info.device_local_bytes, mem.memoryHeaps[h].size);
  return info;
}

}  // namespace

std::vector<DeviceInfo> list_devices() {
  Instance inst;
  std::vector<DeviceInfo> out;
  int i = 0;
  for (VkPhysicalDevice pd : inst.physical_devices()) out.push_back(describe(inst.handle, inst.api, pd, i++));
  return out;
}

std::unique_ptr<Device> Device::open(int index) {
  Instance inst;
  const std::vector<VkPhysicalDevice> devs = inst.physical_devices();
  if (devs.empty()) throw Error("vulkan: the Vulkan driver reports no device");
  if (index < 0 || static_cast<size_t>(index) >= devs.size())
    throw Error("vulkan: no device " + std::to_string(index) + " (there are " + std::to_string(devs.size()) +
                ": see `minnow devices`)");
  std::unique_ptr<Device> d(new Device());
  d->physical_ = devs[static_cast<size_t>(index)];
  d->info_ = describe(inst.handle, inst.api, d->physical_, index);
  d->iapi_ = inst.api;
  d->instance_ = inst.release();

  uint32_t nq = 0;
  d->iapi_.vkGetPhysicalDeviceQueueFamilyProperties(d->physical_, &nq, nullptr);
  std::vector<VkQueueFamilyProperties> families(nq);
  d->iapi_.vkGetPhysicalDeviceQueueFamilyProperties(d->physical_, &nq, families.data());
  // A compute-only family where there is one (it does not wait behind graphics work).
  int family = -1;
  for (uint32_t f = 0; f < nq; ++f) {
    if (!(families[f].queueFlags & VK_QUEUE_COMPUTE_BIT)) continue;
    if (family < 0 || !(families[f].queueFlags & VK_QUEUE_GRAPHICS_BIT)) family = static_cast<int>(f);
    if (!(families[f].queueFlags & VK_QUEUE_GRAPHICS_BIT)) break;
  }
  if (family < 0) throw Error("vulkan: device " + d->info_.name + " has no compute queue");
  d->queue_family_ = static_cast<uint32_t>(family);

  const float priority = 1.0f;
  VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  qci.queueFamilyIndex = d->queue_family_;
  qci.queueCount = 1;
  qci.pQueuePriorities = &priority;
  // Only what the kernels use (robustBufferAccess and the rest stay off: they cost speed).
  VkPhysicalDevice16BitStorageFeatures s16{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
  s16.storageBuffer16BitAccess = d->info_.storage16;
  VkPhysicalDeviceFeatures2 feats{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  feats.pNext = &s16;
  // The tensor-core matmul: halves in shaders and the NV cooperative matrices.
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceCooperativeMatrixFeaturesNV nvcm{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
  std::vector<const char*> extensions;
  VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  void** chain_end = &s16.pNext;
  if (d->info_.nv_cooperative_matrix) {
    f12.shaderFloat16 = VK_TRUE;
    nvcm.cooperativeMatrix = VK_TRUE;
    s16.pNext = &f12;
    f12.pNext = &nvcm;
    chain_end = &nvcm.pNext;
    extensions.push_back("VK_NV_cooperative_matrix");
  }
  // A diagnostic for kernel work: what the driver's compiler made of each kernel.
  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR pep{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
  const char* stats_env = std::getenv("MINNOW_VULKAN_KERNEL_STATS");
  const bool want_stats = stats_env != nullptr && std::strcmp(stats_env, "0") != 0 && *stats_env != '\0' &&
                          has_extension(d->iapi_, d->physical_, "VK_KHR_pipeline_executable_properties");
  if (want_stats) {
    pep.pipelineExecutableInfo = VK_TRUE;
    *chain_end = &pep;
    extensions.push_back("VK_KHR_pipeline_executable_properties");
  }
  dci.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  dci.ppEnabledExtensionNames = extensions.data();
  dci.pNext = &feats;
  dci.queueCreateInfoCount = 1;
  dci.pQueueCreateInfos = &qci;
  check(d->iapi_.vkCreateDevice(d->physical_, &dci, nullptr, &d->device_), "creating the device");
  d->api_ = load_device_api(d->iapi_, d->device_);
  d->api_.vkGetDeviceQueue(d->device_, d->queue_family_, 0, &d->queue_);
  if (want_stats) {
    d->stats_properties_ = reinterpret_cast<PFN_vkGetPipelineExecutablePropertiesKHR>(
        d->iapi_.vkGetDeviceProcAddr(d->device_, "vkGetPipelineExecutablePropertiesKHR"));
    d->stats_ = reinterpret_cast<PFN_vkGetPipelineExecutableStatisticsKHR>(
        d->iapi_.vkGetDeviceProcAddr(d->device_, "vkGetPipelineExecutableStatisticsKHR"));
    if (d->stats_ == nullptr) d->stats_properties_ = nullptr;
  }
  d->iapi_.vkGetPhysicalDeviceMemoryProperties(d->physical_, &d->memory_);
  return d;
}

Device::~Device() {
  if (device_ != VK_NULL_HANDLE) {
    api_.vkDeviceWaitIdle(device_);
    if (copy_fence_ != VK_NULL_HANDLE) api_.vkDestroyFence(device_, copy_fence_, nullptr);
    if (copy_pool_ != VK_NULL_HANDLE) api_.vkDestroyCommandPool(device_, copy_pool_, nullptr);
    api_.vkDestroyDevice(device_, nullptr);
  }
  if (instance_ != VK_NULL_HANDLE) iapi_.vkDestroyInstance(instance_, nullptr);
}

uint32_t Device::memory_type(uint32_t type_bits, Memory use) const {
  // Scores each allowed type; the best wins.
  int best = -1, best_score = -1;
  for (uint32_t i = 0; i < memory_.memoryTypeCount; ++i) {
    if (!(type_bits & (1u << i))) continue;
    const VkMemoryPropertyFlags f = memory_.memoryTypes[i].propertyFlags;
    const bool local = f & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
    const bool visible = (f & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) && (f & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
    const bool cached = f & VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
    int score = 0;
    switch (use) {
      case Memory::Device: score = (local ? 4 : 0) + (visible ? 0 : 1); break;
      case Memory::Readback: score = visible ? 2 + (cached ? 2 : 0) + (local ? 0 : 1) : -1; break;
      case Memory::Upload: score = visible ? 2 + (local ? 0 : 1) : -1; break;
    }
    if (score > best_score) best = static_cast<int>(i), best_score = score;
  }
  if (best < 0) throw Error("vulkan: device " + info_.name + " has no memory type for this buffer");
  return static_cast<uint32_t>(best);
}

Buffer Device::alloc(size_t bytes, Memory use) {
  Buffer b;
  b.owner_ = this;
  b.size_ = (std::max<size_t>(bytes, 4) + 3) & ~size_t{3};
  VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bci.size = b.size_;
  bci.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  check(api_.vkCreateBuffer(device_, &bci, nullptr, &b.buffer_), "creating a buffer");
  VkMemoryRequirements req{};
  api_.vkGetBufferMemoryRequirements(device_, b.buffer_, &req);
  VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  mai.allocationSize = req.size;
  mai.memoryTypeIndex = memory_type(req.memoryTypeBits, use);
  const VkResult r = api_.vkAllocateMemory(device_, &mai, nullptr, &b.memory_);
  if (r != VK_SUCCESS)
    throw Error("vulkan: cannot allocate " + std::to_string(bytes >> 20) + " MiB on " + info_.name + ": " + result_name(r));
  check(api_.vkBindBufferMemory(device_, b.buffer_, b.memory_, 0), "binding buffer memory");
  const VkMemoryPropertyFlags f = memory_.memoryTypes[mai.memoryTypeIndex].propertyFlags;
  if ((f & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) && (f & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT))
    check(api_.vkMapMemory(device_, b.memory_, 0, VK_WHOLE_SIZE, 0, &b.mapped_), "mapping a buffer");
  return b;
}

void Device::free(Buffer& b) {
  if (b.mapped_ != nullptr) api_.vkUnmapMemory(device_, b.memory_);
  if (b.buffer_ != VK_NULL_HANDLE) api_.vkDestroyBuffer(device_, b.buffer_, nullptr);
  if (b.memory_ != VK_NULL_HANDLE) api_.vkFreeMemory(device_, b.memory_, nullptr);
}

void Device::run_one(const std::function<void(VkCommandBuffer)>& record) {
  if (copy_pool_ == VK_NULL_HANDLE) {
    VkCommandPoolCreateInfo pci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pci.queueFamilyIndex = queue_family_;
    check(api_.vkCreateCommandPool(device_, &pci, nullptr, &copy_pool_), "creating a command pool");
    VkCommandBufferAllocateInfo cai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    cai.commandPool = copy_pool_;
    cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    cai.commandBufferCount = 1;
    check(api_.vkAllocateCommandBuffers(device_, &cai, &copy_cmd_), "allocating a command buffer");
    VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    check(api_.vkCreateFence(device_, &fci, nullptr, &copy_fence_), "creating a fence");
  }
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  check(api_.vkBeginCommandBuffer(copy_cmd_, &bi), "recording a copy");
  record(copy_cmd_);
  check(api_.vkEndCommandBuffer(copy_cmd_), "recording a copy");
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = 1;
  si.pCommandBuffers = &copy_cmd_;
  check(api_.vkQueueSubmit(queue_, 1, &si, copy_fence_), "submitting a copy");
  check(api_.vkWaitForFences(device_, 1, &copy_fence_, VK_TRUE, UINT64_MAX), "waiting for a copy");
  check(api_.vkResetFences(device_, 1, &copy_fence_), "resetting a fence");
}

void Device::copy_and_wait(VkBuffer src, size_t src_offset, VkBuffer dst, size_t dst_offset, size_t bytes) {
  run_one([&](VkCommandBuffer cmd) {
    VkBufferCopy region{src_offset, dst_offset, bytes};
    api_.vkCmdCopyBuffer(cmd, src, dst, 1, &region);
  });
}

void Device::zero(Buffer& b) {
  run_one([&](VkCommandBuffer cmd) { api_.vkCmdFillBuffer(cmd, b.handle(), 0, VK_WHOLE_SIZE, 0); });
}

void Device::upload(Buffer& dst, const void* src, size_t bytes, size_t offset) {
  if (offset + bytes > dst.size()) throw Error("vulkan: upload past the end of a buffer");
  if (dst.mapped() != nullptr) {
    std::memcpy(static_cast<uint8_t*>(dst.mapped()) + offset, src, bytes);
    return;
  }
  Buffer staging = alloc(bytes, Memory::Upload);
  std::memcpy(staging.mapped(), src, bytes);
  copy_and_wait(staging.handle(), 0, dst.handle(), offset, bytes);
}

void Device::download(const Buffer& src, void* dst, size_t bytes, size_t offset) {
  if (offset + bytes > src.size()) throw Error("vulkan: download past the end of a buffer");
  if (src.mapped() != nullptr) {
    std::memcpy(dst, static_cast<const uint8_t*>(src.mapped()) + offset, bytes);
    return;
  }
  Buffer staging = alloc(bytes, Memory::Readback);
  copy_and_wait(src.handle(), offset, staging.handle(), 0, bytes);
  std::memcpy(dst, staging.mapped(), bytes);
}

Buffer& Buffer::operator=(Buffer&& o) noexcept {
  if (this != &o) {
    if (owner_ != nullptr) owner_->free(*this);
    owner_ = std::exchange(o.owner_, nullptr);
    buffer_ = std::exchange(o.buffer_, VK_NULL_HANDLE);
    memory_ = std::exchange(o.memory_, VK_NULL_HANDLE);
    size_ = std::exchange(o.size_, 0);
    mapped_ = std::exchange(o.mapped_, nullptr);
  }
  return *this;
}

Buffer::~Buffer() {
  if (owner_ != nullptr) owner_->free(*this);
}

}  // namespace minnow::vulkan
