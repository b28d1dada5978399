// A whole model's forward pass on a Vulkan device: weights uploaded once, the f16 KV cache
// and every activation resident on the device, one command stream per pass, only the
// logits read back. The same config-driven block as the CPU's Transformer (biases, QK norms,
// sandwich norms, GeGLU, sliding windows, soft-capping).
#pragma once
#include <memory>

#include "models/sequence_forward.hpp"

namespace minnow::vulkan {

// On device `device` (see `minnow devices`): layers [first_layer, n_layers) and the output
// head; the layers before first_layer run on the CPU's Transformer (with pool and an f16
// KV cache of their own), and their hidden rows are uploaded. Throws Error naming what the
// device or the model lacks. Each sequence() has KV caches of ctx positions.
std::shared_ptr<DeviceModel> upload_model(const LoadedModel& m, int ctx, int max_batch, int device, int first_layer = 0,
                                          ThreadPool* pool = nullptr);

}  // namespace minnow::vulkan
