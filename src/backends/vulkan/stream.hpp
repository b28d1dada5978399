// Compute pipelines and the command stream that records their dispatches: a forward pass
// records every dispatch into one command buffer and submits it once.
#pragma once
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "backends/vulkan/device.hpp"

namespace minnow::vulkan {

// SPIR-V compiled at build time (backends/vulkan/shaders/*.comp, embedded by CMake).
struct ShaderCode {
  const char* name;
  const uint32_t* words;
  size_t bytes;
};

// A compute pipeline whose shader reads and writes n_buffers storage buffers (bindings
// 0..n_buffers-1) and takes push_bytes of push constants.
class Kernel {
 public:
  Kernel(Device& dev, const ShaderCode& code, int n_buffers, uint32_t push_bytes);
  ~Kernel();
  Kernel(const Kernel&) = delete;
  Kernel& operator=(const Kernel&) = delete;
  const char* name() const { return name_; }

 private:
  friend class Stream;
  void destroy();
  void print_stats() const;
  Device& dev_;
  const char* name_;
  int n_buffers_;
  uint32_t push_bytes_;
  VkDescriptorSetLayout set_layout_ = VK_NULL_HANDLE;
  VkPipelineLayout layout_ = VK_NULL_HANDLE;
  VkPipeline pipeline_ = VK_NULL_HANDLE;
};

// With MINNOW_VULKAN_PROFILE=1 in the environment, a stream times every dispatch with GPU
// timestamps and the process prints, at exit, the time per kernel and grid for each stream
// name (the time from the previous dispatch's end, so barrier waits count to the next one).
class Stream {
 public:
  explicit Stream(Device& dev, const char* name = "stream");
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  // Records k over groups (gx, gy, gz) with buffers bound in order and push constants
  // (k's push_bytes of them). Nothing runs until submit_and_wait().
  void dispatch(const Kernel& k, std::initializer_list<const Buffer*> buffers, const void* push, uint32_t gx,
                uint32_t gy = 1, uint32_t gz = 1);
  // Copies bytes from src to dst (offsets in bytes).
  void copy(const Buffer& src, size_t src_offset, Buffer& dst, size_t dst_offset, size_t bytes);
  // Dispatches recorded after it see the writes of those before.
  void barrier();
  // Runs what was recorded and waits for it; the stream is then empty and ready again.
  void submit_and_wait();

  // Recorded once, run many times: after keep(), the recording is closed and each replay()
  // runs it again and waits (the buffers it reads may be rewritten between runs); clear()
  // empties the stream for a new recording.
  void keep();
  bool kept() const { return kept_; }
  void replay();
  void clear();

 private:
  VkDescriptorSet allocate_set(VkDescriptorSetLayout layout);
  void destroy();
  void begin();

  Device& dev_;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  VkCommandBuffer cmd_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
  std::vector<VkDescriptorPool> set_pools_;  // grown when full; reset after each submit
  size_t set_pool_in_use_ = 0;
  void end_recording();
  void run_and_wait();
  bool recording_ = false;
  bool kept_ = false;
  // Barriers name the transfer stage only next to a copy (MINNOW_VULKAN_BARRIER=all: always).
  bool copied_ = false;  // a copy since the last barrier
  bool lean_barriers_ = true;
  // Profiling: one timestamp after each command, labelled.
  const char* name_;
  VkQueryPool queries_ = VK_NULL_HANDLE;
  std::vector<std::string> labels_;
  void stamp(std::string label);
  void collect();
};

}  // namespace minnow::vulkan
