#include "backends/vulkan/stream.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

#include "base/error.hpp"

namespace minnow::vulkan {

constexpr uint32_t kSetsPerPool = 512;
constexpr uint32_t kMaxBuffersPerKernel = 12;
constexpr uint32_t kMaxStamps = 8192;

namespace {

// Time per label over the process's life, printed at exit (MINNOW_VULKAN_PROFILE).
class ProfileTable {
 public:
  void add(const std::string& label, double ns) {
    std::lock_guard<std::mutex> lock(mu_);
    Row& r = rows_[label];
    r.ns += ns;
    ++r.calls;
  }
  ~ProfileTable() {
    if (rows_.empty()) return;
    std::vector<std::pair<std::string, Row>> rows(rows_.begin(), rows_.end());
    std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second.ns > b.second.ns; });
    std::map<std::string, double> per_stream;
    for (const auto& [label, r] : rows) per_stream[label.substr(0, label.find(' '))] += r.ns;
    std::fprintf(stderr, "vulkan profile: %-44s %8s %10s %9s %6s\n", "stream kernel [grid]", "calls", "total ms", "mean us", "%");
    for (const auto& [label, r] : rows)
      std::fprintf(stderr, "vulkan profile: %-44s %8lld %10.2f %9.2f %5.1f%%\n", label.c_str(), r.calls, r.ns * 1e-6,
                   r.ns * 1e-3 / static_cast<double>(r.calls), 100.0 * r.ns / per_stream[label.substr(0, label.find(' '))]);
  }

 private:
  struct Row {
    double ns = 0;
    long long calls = 0;
  };
  std::mutex mu_;
  std::map<std::string, Row> rows_;
};

ProfileTable& profile_table() {
  static ProfileTable table;
  return table;
}

bool profiling() {
  static const bool on = [] {
    const char* v = std::getenv("MINNOW_VULKAN_PROFILE");
    return v != nullptr && *v != '\0' && *v != '0';
  }();
  return on;
}

}  // namespace

Kernel::Kernel(Device& dev, const ShaderCode& code, int n_buffers, uint32_t push_bytes)
    : dev_(dev), name_(code.name), n_buffers_(n_buffers), push_bytes_(push_bytes) {
  if (n_buffers < 1 || static_cast<uint32_t>(n_buffers) > kMaxBuffersPerKernel)
    throw Error(std::string("vulkan: kernel ") + code.name + " binds too many buffers");
  const DeviceApi& a = dev.api();
  VkDescriptorSetLayoutBinding bindings[kMaxBuffersPerKernel]{};
  for (int i = 0; i < n_buffers; ++i) {
    bindings[i].binding = static_cast<uint32_t>(i);
    bindings[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    bindings[i].descriptorCount = 1;
    bindings[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  }
  VkDescriptorSetLayoutCreateInfo dli{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  dli.bindingCount = static_cast<uint32_t>(n_buffers);
  dli.pBindings = bindings;
  VkShaderModule module = VK_NULL_HANDLE;
  try {
    check(a.vkCreateDescriptorSetLayout(dev.handle(), &dli, nullptr, &set_layout_), "creating a descriptor set layout");
    VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes};
    VkPipelineLayoutCreateInfo pli{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    pli.setLayoutCount = 1;
    pli.pSetLayouts = &set_layout_;
    pli.pushConstantRangeCount = push_bytes > 0 ? 1 : 0;
    pli.pPushConstantRanges = &range;
    check(a.vkCreatePipelineLayout(dev.handle(), &pli, nullptr, &layout_), "creating a pipeline layout");
    VkShaderModuleCreateInfo smi{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    smi.codeSize = code.bytes;
    smi.pCode = code.words;
    check(a.vkCreateShaderModule(dev.handle(), &smi, nullptr, &module), "loading a shader");
    VkComputePipelineCreateInfo cpi{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    cpi.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    cpi.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    cpi.stage.module = module;
    cpi.stage.pName = "main";
    cpi.layout = layout_;
    if (dev.kernel_stats()) cpi.flags |= VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR;
    const VkResult r = a.vkCreateComputePipelines(dev.handle(), VK_NULL_HANDLE, 1, &cpi, nullptr, &pipeline_);
    a.vkDestroyShaderModule(dev.handle(), module, nullptr);
    check(r, (std::string("building kernel ") + code.name).c_str());
    if (dev.kernel_stats()) print_stats();
  } catch (...) {
    destroy();
    throw;
  }
}

Kernel::~Kernel() { destroy(); }

// One line a kernel: the statistics the driver's compiler gives (registers, spills, ...).
void Kernel::print_stats() const {
  VkPipelineExecutableInfoKHR ei{VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR};
  ei.pipeline = pipeline_;
  ei.executableIndex = 0;
  uint32_t n = 0;
  if (dev_.stats_fn()(dev_.handle(), &ei, &n, nullptr) != VK_SUCCESS || n == 0) return;
  std::vector<VkPipelineExecutableStatisticKHR> stats(n, {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR});
  if (dev_.stats_fn()(dev_.handle(), &ei, &n, stats.data()) != VK_SUCCESS) return;
  std::string line = std::string("vulkan kernel ") + name_ + ":";
  for (uint32_t i = 0; i < n; ++i) {
    const VkPipelineExecutableStatisticKHR& st = stats[i];
    line += std::string(i ? ", " : " ") + st.name + " ";
    switch (st.format) {
      case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR: line += st.value.b32 ? "yes" : "no"; break;
      case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR: line += std::to_string(st.value.i64); break;
      case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR: line += std::to_string(st.value.u64); break;
      case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_FLOAT64_KHR: line += std::to_string(st.value.f64); break;
      default: line += "?";
    }
  }
  std::fprintf(stderr, "%s\n", line.c_str());
}

void Kernel::destroy() {
  const DeviceApi& a = dev_.api();
  if (pipeline_ != VK_NULL_HANDLE) a.vkDestroyPipeline(dev_.handle(), pipeline_, nullptr);
  if (layout_ != VK_NULL_HANDLE) a.vkDestroyPipelineLayout(dev_.handle(), layout_, nullptr);
  if (set_layout_ != VK_NULL_HANDLE) a.vkDestroyDescriptorSetLayout(dev_.handle(), set_layout_, nullptr);
  pipeline_ = VK_NULL_HANDLE, layout_ = VK_NULL_HANDLE, set_layout_ = VK_NULL_HANDLE;
}

Stream::Stream(Device& dev, const char* name) : dev_(dev), name_(name) {
  const char* b = std::getenv("MINNOW_VULKAN_BARRIER");
  lean_barriers_ = b == nullptr || std::strcmp(b, "all") != 0;
  const DeviceApi& a = dev.api();
  VkCommandPoolCreateInfo pci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pci.queueFamilyIndex = dev.queue_family();
  check(a.vkCreateCommandPool(dev.handle(), &pci, nullptr, &pool_), "creating a command pool");
  VkCommandBufferAllocateInfo cai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  cai.commandPool = pool_;
  cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  cai.commandBufferCount = 1;
  VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  try {
    check(a.vkAllocateCommandBuffers(dev.handle(), &cai, &cmd_), "allocating a command buffer");
    check(a.vkCreateFence(dev.handle(), &fci, nullptr, &fence_), "creating a fence");
    if (profiling() && dev.info().timestamp_ns > 0) {
      profile_table();  // constructed before the first use, so destroyed after it
      VkQueryPoolCreateInfo qi{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
      qi.queryType = VK_QUERY_TYPE_TIMESTAMP;
      qi.queryCount = kMaxStamps;
      check(a.vkCreateQueryPool(dev.handle(), &qi, nullptr, &queries_), "creating a timestamp query pool");
    }
  } catch (...) {
    destroy();
    throw;
  }
}

Stream::~Stream() { destroy(); }

void Stream::destroy() {
  const DeviceApi& a = dev_.api();
  if (recording_) a.vkEndCommandBuffer(cmd_);
  for (VkDescriptorPool p : set_pools_) a.vkDestroyDescriptorPool(dev_.handle(), p, nullptr);
  set_pools_.clear();
  if (queries_ != VK_NULL_HANDLE) a.vkDestroyQueryPool(dev_.handle(), queries_, nullptr);
  queries_ = VK_NULL_HANDLE;
  if (fence_ != VK_NULL_HANDLE) a.vkDestroyFence(dev_.handle(), fence_, nullptr);
  if (pool_ != VK_NULL_HANDLE) a.vkDestroyCommandPool(dev_.handle(), pool_, nullptr);
  fence_ = VK_NULL_HANDLE, pool_ = VK_NULL_HANDLE;
}

void Stream::begin() {
  if (recording_) return;
  if (kept_) throw Error("vulkan: recording into a kept stream (clear() it first)");
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  check(dev_.api().vkBeginCommandBuffer(cmd_, &bi), "recording commands");
  recording_ = true;
  if (queries_ != VK_NULL_HANDLE) {
    dev_.api().vkCmdResetQueryPool(cmd_, queries_, 0, kMaxStamps);
    labels_.clear();
    stamp("start");
  }
}

void Stream::stamp(std::string label) {
  if (queries_ == VK_NULL_HANDLE || labels_.size() >= kMaxStamps) return;
  dev_.api().vkCmdWriteTimestamp(cmd_, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries_, static_cast<uint32_t>(labels_.size()));
  labels_.push_back(std::string(name_) + " " + label);
}

void Stream::collect() {
  if (queries_ == VK_NULL_HANDLE || labels_.size() < 2) return;
  std::vector<uint64_t> t(labels_.size());
  check(dev_.api().vkGetQueryPoolResults(dev_.handle(), queries_, 0, static_cast<uint32_t>(t.size()), t.size() * 8,
                                         t.data(), 8, VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
        "reading timestamps");
  const double tick = dev_.info().timestamp_ns;
  for (size_t i = 1; i < t.size(); ++i) profile_table().add(labels_[i], static_cast<double>(t[i] - t[i - 1]) * tick);
}

VkDescriptorSet Stream::allocate_set(VkDescriptorSetLayout layout) {
  const DeviceApi& a = dev_.api();
  for (;;) {
    if (set_pool_in_use_ == set_pools_.size()) {
      VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, kSetsPerPool * kMaxBuffersPerKernel};
      VkDescriptorPoolCreateInfo dpi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
      dpi.maxSets = kSetsPerPool;
      dpi.poolSizeCount = 1;
      dpi.pPoolSizes = &size;
      VkDescriptorPool p = VK_NULL_HANDLE;
      check(a.vkCreateDescriptorPool(dev_.handle(), &dpi, nullptr, &p), "creating a descriptor pool");
      set_pools_.push_back(p);
    }
    VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    ai.descriptorPool = set_pools_[set_pool_in_use_];
    ai.descriptorSetCount = 1;
    ai.pSetLayouts = &layout;
    VkDescriptorSet set = VK_NULL_HANDLE;
    const VkResult r = a.vkAllocateDescriptorSets(dev_.handle(), &ai, &set);
    if (r == VK_SUCCESS) return set;
    if (r != VK_ERROR_OUT_OF_POOL_MEMORY && r != VK_ERROR_FRAGMENTED_POOL) check(r, "allocating a descriptor set");
    ++set_pool_in_use_;  // this pool is full: the next one
  }
}

void Stream::dispatch(const Kernel& k, std::initializer_list<const Buffer*> buffers, const void* push, uint32_t gx,
                      uint32_t gy, uint32_t gz) {
  if (static_cast<int>(buffers.size()) != k.n_buffers_)
    throw Error(std::string("vulkan: kernel ") + k.name_ + " takes " + std::to_string(k.n_buffers_) + " buffers, not " +
                std::to_string(buffers.size()));
  if (gx == 0 || gy == 0 || gz == 0) return;
  begin();
  const DeviceApi& a = dev_.api();
  VkDescriptorSet set = allocate_set(k.set_layout_);
  VkDescriptorBufferInfo infos[kMaxBuffersPerKernel]{};
  VkWriteDescriptorSet writes[kMaxBuffersPerKernel]{};
  uint32_t i = 0;
  for (const Buffer* b : buffers) {
    infos[i] = {b->handle(), 0, VK_WHOLE_SIZE};
    writes[i].sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
    writes[i].dstSet = set;
    writes[i].dstBinding = i;
    writes[i].descriptorCount = 1;
    writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[i].pBufferInfo = &infos[i];
    ++i;
  }
  a.vkUpdateDescriptorSets(dev_.handle(), i, writes, 0, nullptr);
  a.vkCmdBindPipeline(cmd_, VK_PIPELINE_BIND_POINT_COMPUTE, k.pipeline_);
  a.vkCmdBindDescriptorSets(cmd_, VK_PIPELINE_BIND_POINT_COMPUTE, k.layout_, 0, 1, &set, 0, nullptr);
  if (k.push_bytes_ > 0) a.vkCmdPushConstants(cmd_, k.layout_, VK_SHADER_STAGE_COMPUTE_BIT, 0, k.push_bytes_, push);
  a.vkCmdDispatch(cmd_, gx, gy, gz);
  if (queries_ != VK_NULL_HANDLE)
    stamp(std::string(k.name_) + " [" + std::to_string(gx) + "x" + std::to_string(gy) + "x" + std::to_string(gz) + "]");
}

void Stream::copy(const Buffer& src, size_t src_offset, Buffer& dst, size_t dst_offset, size_t bytes) {
  if (bytes == 0) return;
  if (src_offset + bytes > src.size() || dst_offset + bytes > dst.size()) throw Error("vulkan: copy past the end of a buffer");
  begin();
  VkBufferCopy region{src_offset, dst_offset, bytes};
  dev_.api().vkCmdCopyBuffer(cmd_, src.handle(), dst.handle(), 1, &region);
  copied_ = true;
  stamp("copy");
}

void Stream::barrier() {
  begin();
  // Between two dispatches a compute-to-compute dependency is all it takes; the transfer
  // stage joins where a copy came before (copies only start passes here). A copy after
  // dispatches would need it on the destination side: copy() is never recorded there.
  const bool transfer = copied_ || !lean_barriers_;
  copied_ = false;
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | (transfer ? VkAccessFlags{VK_ACCESS_TRANSFER_WRITE_BIT} : 0u);
  mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | (lean_barriers_ ? 0u : VkAccessFlags{VK_ACCESS_TRANSFER_READ_BIT});
  const VkPipelineStageFlags src = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | (transfer ? VkPipelineStageFlags{VK_PIPELINE_STAGE_TRANSFER_BIT} : 0u);
  const VkPipelineStageFlags dst = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | (lean_barriers_ ? 0u : VkPipelineStageFlags{VK_PIPELINE_STAGE_TRANSFER_BIT});
  dev_.api().vkCmdPipelineBarrier(cmd_, src, dst, 0, 1, &mb, 0, nullptr, 0, nullptr);
}

void Stream::end_recording() {
  const DeviceApi& a = dev_.api();
  // Results are read by the host (mapped memory) after this.
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  a.vkCmdPipelineBarrier(cmd_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                         VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, nullptr, 0, nullptr);
  recording_ = false;
  check(a.vkEndCommandBuffer(cmd_), "recording commands");
}

void Stream::run_and_wait() {
  const DeviceApi& a = dev_.api();
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cmd_;
  check(a.vkQueueSubmit(dev_.queue(), 1, &si, fence_), "submitting commands");
  check(a.vkWaitForFences(dev_.handle(), 1, &fence_, VK_TRUE, UINT64_MAX), "waiting for the device");
  check(a.vkResetFences(dev_.handle(), 1, &fence_), "resetting a fence");
  collect();
}

void Stream::submit_and_wait() {
  if (kept_) throw Error("vulkan: submit_and_wait on a kept recording (replay() runs it)");
  if (!recording_) return;
  end_recording();
  run_and_wait();
  clear();
}

void Stream::keep() {
  if (!recording_) throw Error("vulkan: nothing recorded to keep");
  end_recording();
  kept_ = true;
}

void Stream::replay() {
  if (!kept_) throw Error("vulkan: replay without a kept recording");
  run_and_wait();
}

void Stream::clear() {
  const DeviceApi& a = dev_.api();
  if (recording_) {
    a.vkEndCommandBuffer(cmd_);
    recording_ = false;
  }
  check(a.vkResetCommandBuffer(cmd_, 0), "resetting a command buffer");
  for (size_t p = 0; p < set_pools_.size() && p <= set_pool_in_use_; ++p)
    a.vkResetDescriptorPool(dev_.handle(), set_pools_[p], 0);
  set_pool_in_use_ = 0;
  kept_ = false;
}

}  // namespace minnow::vulkan
