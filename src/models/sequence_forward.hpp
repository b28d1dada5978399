// The seam between the runtime and a backend: one sequence's forward pass, with the KV
// cache the backend keeps (host memory for the CPU, device memory for a GPU).
#pragma once
#include <cstdint>
#include <memory>

#include "base/thread_pool.hpp"
#include "models/model.hpp"
#include "tensor/dtype.hpp"

namespace minnow {

class SequenceForward {
 public:
  virtual ~SequenceForward() = default;
  // Most tokens per forward() call.
  virtual int max_batch() const = 0;
  // tokens[0..n) at positions pos0.. (their keys and values go into the cache); logits:
  // n x vocab when all_logits, else the last token's vocab logits.
  virtual void forward(const int32_t* tokens, int n, int pos0, float* logits, bool all_logits) = 0;
};

// A model's weights in a device's memory, shared by the sequences made from it (a server's
// slots), each with a KV cache of its own. They share activation buffers: one at a time.
class DeviceModel {
 public:
  virtual ~DeviceModel() = default;
  virtual std::unique_ptr<SequenceForward> sequence() = 0;
};

// The CPU's: the Transformer over a KvCache of kv_type (F32, F16 or Q8_0).
std::unique_ptr<SequenceForward> make_cpu_forward(const LoadedModel& m, int ctx, int max_batch, ThreadPool& pool,
                                                  bool int8_activations, DType kv_type);

}  // namespace minnow
