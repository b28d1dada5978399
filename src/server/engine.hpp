// The serving engine: N slots share one copy of the weights and one forward pass.
// Continuous batching: every step runs the next token of each generating slot plus a
// chunk of the prompts waiting to be prefilled, so a long prompt never stalls the others.
// Requests beyond N wait in a bounded queue. A slot keeps its KV cache after a request,
// and the next request that starts with the same tokens (the next turn of a
// conversation) is given that slot and prefills only what is new.
#pragma once
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "minnow/llm.hpp"
#include "server/slot_drafter.hpp"

namespace minnow {
namespace grammar {
struct Grammar;
class TokenTrie;
}  // namespace grammar
class KvCache;
class SequenceForward;
class Transformer;
}  // namespace minnow

namespace minnow::server {

struct EngineOptions {
  int parallel = 4;     // slots
  int ctx = 4096;       // KV capacity per slot (tokens)
  int queue = 64;       // requests that may wait for a slot
  int threads = 0;      // 0: one per core
  int prefill_chunk = 256;  // prompt tokens per step while other slots generate
  SessionOptions::KvType kv_type = SessionOptions::KvType::F16;
  bool int8_decode = false;  // as SessionOptions::int8_decode
  // As SessionOptions: a Vulkan device runs every slot's passes one after another (its
  // weights uploaded once); the CPU batches the slots into one pass.
  SessionOptions::Backend backend = SessionOptions::Backend::Cpu;
  int device = 0, gpu_layers = -1;
  // Prompt-lookup speculation for requests that do not choose (CompletionRequest::
  // lookup_draft -1): up to this many proposed tokens per slot and step; 0: off. The CPU
  // backend only (a device runs plain decoding).
  int lookup_draft = 0;
  // Speculative decoding with a draft model (same vocabulary, not owned; null: none) for
  // requests that do not choose: each slot keeps a draft cache, and the draft model
  // proposes for every decoding slot in batched passes. The CPU backend only. With
  // lookup_draft too, prompt lookup proposes first and the draft model where it finds nothing.
  const Model* draft_model = nullptr;
  int draft_max = 8;
  float draft_min_p = 0.5f;  // as GenerateOptions::draft_min_p
};

constexpr int kMaxLookupDraft = 16;

struct CompletionRequest {
  std::vector<int32_t> prompt;
  SamplingOptions sampling;
  int max_tokens = 256;
  std::vector<std::string> stop;
  bool ignore_eos = false;
  std::shared_ptr<const grammar::Grammar> grammar;  // structured output; null: free text
  // Speculative tokens per step by prompt lookup (0: no speculation at all; -1: the
  // engine's default: its draft model, or EngineOptions::lookup_draft).
  int lookup_draft = -1;
};

enum class Finish { Running, Stop, Length, Cancelled };

// One request's output, written by the engine thread and read by the HTTP thread.
class Job {
 public:
  struct Update {
    std::string text;  // new text since the last update (whole UTF-8 characters)
    Finish finish = Finish::Running;
    int prompt_tokens = 0, completion_tokens = 0;
  };
  // Waits up to `timeout` for new text or the end; false when nothing happened.
  bool wait(Update& out, std::chrono::milliseconds timeout);
  // The client went away: the engine frees the slot at its next step.
  void cancel() { cancelled_.store(true); }
  bool cancelled() const { return cancelled_.load(); }

 private:
  friend class Engine;
  void publish(std::string_view text, Finish finish, int completion_tokens);

  std::mutex mu_;
  std::condition_variable cv_;
  std::string pending_;
  Finish finish_ = Finish::Running;
  bool reported_end_ = false;
  int prompt_tokens_ = 0, completion_tokens_ = 0;
  std::atomic<bool> cancelled_{false};
  CompletionRequest request_;
};

struct EngineStats {
  uint64_t requests = 0, prompt_tokens = 0, completion_tokens = 0, reused_prompt_tokens = 0;
  uint64_t drafted_tokens = 0, accepted_draft_tokens = 0;  // speculative decoding
  int queue_depth = 0, slots_busy = 0, slots = 0;
  double decode_tokens_per_second = 0;  // generated tokens over the last 10 s of activity
};

class QueueFull : public std::runtime_error {
 public:
  QueueFull() : std::runtime_error("the server is busy: the request queue is full, retry later") {}
};

class Engine {
 public:
  Engine(const Model& model, const EngineOptions& o);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  int context_size() const { return ctx_; }
  // Queues a request (prompt already checked to fit the context); throws QueueFull.
  std::shared_ptr<Job> submit(CompletionRequest r);
  EngineStats stats() const;

 private:
  struct Slot;
  void loop();
  void admit();
  bool step();
  void record_step(int sampled, int drafted, int accepted);  // stats after a step
  void propose_drafts();  // speculating slots' proposals for this step
  void finish(Slot& s, Finish f);
  void forward_each_slot();  // the device's way: each slot's rows in a pass of its own

  const Model& model_;
  EngineOptions o_;
  int ctx_;
  int max_batch_;  // rows per forward pass
  std::unique_ptr<ThreadPool> pool_;
  std::unique_ptr<Transformer> net_;  // null: the slots have device sequences
  std::vector<std::unique_ptr<Slot>> slots_;
  std::unique_ptr<SlotDrafter> drafter_;  // with a draft model

  mutable std::mutex mu_;  // guards queue_, stop_, stats_
  std::condition_variable cv_;
  std::deque<std::shared_ptr<Job>> queue_;
  bool stop_ = false;
  EngineStats stats_;
  std::deque<std::pair<std::chrono::steady_clock::time_point, int>> recent_tokens_;
  uint64_t admissions_ = 0;
  std::shared_ptr<const grammar::TokenTrie> vocab_trie_;  // built at the first request with a grammar

  // Per-step scratch.
  std::vector<int32_t> tokens_, pos_, logit_rows_;
  std::vector<KvCache*> kvs_;
  std::vector<Slot*> row_slots_, logit_slots_;
  std::vector<float> logits_, unused_logits_;
  std::vector<SlotDrafter::Ask> asks_;  // propose_drafts': the draft model's
  std::vector<Slot*> extended_;         // slots whose `cached` holds `next` while proposing
  std::thread thread_;
};

}  // namespace minnow::server
