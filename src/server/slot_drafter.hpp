// Speculative decoding in the server with a draft model: a smaller model with the same
// vocabulary keeps one KV cache per slot and proposes greedy continuations for every
// speculating slot at once, one batched pass per drafted token, on the engine's threads.
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "base/thread_pool.hpp"
#include "minnow/llm.hpp"
#include "tensor/dtype.hpp"

namespace minnow {
class KvCache;
class Transformer;
}  // namespace minnow

namespace minnow::server {

class SlotDrafter {
 public:
  // Throws Error when the draft model's vocabulary is not the target's.
  SlotDrafter(const Model& draft, const Model& target, int slots, int ctx, DType kv_type, ThreadPool& pool);
  ~SlotDrafter();

  struct Ask {
    int slot;
    std::span<const int32_t> context;  // the slot's tokens so far (its cache catches up)
    int max_tokens;
    std::vector<int32_t>* out;  // cleared, then up to max_tokens proposals
  };
  // Greedy proposals for each ask, stopping a slot's before a token whose probability is
  // below min_p (an unlikely token is seldom kept, and each costs a draft pass).
  void propose(std::span<const Ask> asks, float min_p);

 private:
  // One forward pass over the rows in tokens_ / pos_ / kvs_; logits of the rows in want_.
  void pass();
  // Appends the argmax of logit row `row` to ask's output unless its probability is below
  // min_p; returns whether it did.
  bool take(const Ask& ask, size_t row, float min_p);

  const Model& model_;
  int ctx_;
  std::unique_ptr<Transformer> net_;
  std::vector<std::unique_ptr<KvCache>> kv_;
  std::vector<std::vector<int32_t>> cached_;  // per slot: tokens whose K/V are in kv_

  // Scratch, kept between steps (no allocation once grown).
  std::vector<int32_t> tokens_, pos_, want_;
  std::vector<KvCache*> kvs_;
  std::vector<size_t> owners_;  // the ask of each wanted row
  std::vector<size_t> fed_;     // per ask: context tokens in its cache
  std::vector<int> limit_;
  std::vector<bool> live_;
  std::vector<float> logits_, scratch_;
};

}  // namespace minnow::server
