// Which backend SessionOptions choose, shared by Session and the server's engine.
#pragma once
#include <memory>

#include "base/thread_pool.hpp"
#include "minnow/llm.hpp"
#include "models/model.hpp"
#include "models/sequence_forward.hpp"

namespace minnow {
// The model on the Vulkan device the options name (its last gpu_layers layers; those
// before run on the CPU with `pool`), or null where the CPU runs everything (backend cpu,
// or gpu_layers 0). Throws Error where the options or this build cannot.
std::shared_ptr<DeviceModel> open_device_model(const LoadedModel& m, int ctx, int max_batch, const SessionOptions& o,
                                              ThreadPool& pool);

}  // namespace minnow
