#include "server/engine.hpp"

#include <algorithm>
#include <cstdio>
#include <optional>

#include "base/error.hpp"
#include "base/thread_pool.hpp"
#include "models/kv_cache.hpp"
#include "models/model.hpp"
#include "models/transformer.hpp"
#include "models/sequence_forward.hpp"
#include "runtime/device_model.hpp"
#include "runtime/kv_type.hpp"
#include "runtime/prompt_lookup.hpp"
#include "runtime/sampler.hpp"
#include "runtime/stop_matcher.hpp"
#include "tokenizer/stream_decoder.hpp"

namespace minnow::server {

namespace {
constexpr std::chrono::seconds kRateWindow{10};  // for decode_tokens_per_second
}

bool Job::wait(Update& out, std::chrono::milliseconds timeout) {
  std::unique_lock lk(mu_);
  auto ready = [&] { return !pending_.empty() || (finish_ != Finish::Running && !reported_end_); };
  if (!cv_.wait_for(lk, timeout, ready)) return false;
  out.text.clear();
  out.text.swap(pending_);
  out.finish = finish_;
  out.prompt_tokens = prompt_tokens_;
  out.completion_tokens = completion_tokens_;
  if (finish_ != Finish::Running) reported_end_ = true;
  return true;
}

void Job::publish(std::string_view text, Finish finish, int completion_tokens) {
  {
    std::lock_guard lk(mu_);
    pending_.append(text);
    finish_ = finish;
    completion_tokens_ = completion_tokens;
  }
  cv_.notify_all();
}

struct Engine::Slot {
  std::unique_ptr<KvCache> kv;               // the CPU's
  std::unique_ptr<SequenceForward> device;  // or a device's
  std::vector<int32_t> cached;  // tokens whose K/V are in kv, in position order
  std::shared_ptr<Job> job;     // null: free
  std::optional<Sampler> sampler;
  std::optional<grammar::TokenConstraint> constraint;
  StreamDecoder text;
  StopMatcher stop;
  std::vector<int32_t> generated;
  size_t fed = 0;        // prompt tokens in the cache
  int taken = 0;         // prompt tokens in the current step
  int32_t next = -1;     // sampled token to feed (decoding)
  bool decoding = false;
  std::optional<DraftLength> draft_length;  // speculating: adapts to what is accepted
  bool draft_by_model = false;              // the draft model proposes, not prompt lookup
  int lookup_first = 0;                     // with the draft model: prompt lookup's tokens, tried first
  std::vector<int32_t> draft;               // tokens proposed after `next` this step
  uint64_t last_used = 0;
};

Engine::Engine(const Model& model, const EngineOptions& o) : model_(model), o_(o) {
  const ModelConfig& c = model.impl().config;
  if (o.parallel <= 0) throw Error("serve: --parallel must be positive (got " + std::to_string(o.parallel) + ")");
  if (o.ctx <= 0) throw Error("serve: --ctx must be positive (got " + std::to_string(o.ctx) + ")");
  if (o.queue < 0) throw Error("serve: --queue must be >= 0 (got " + std::to_string(o.queue) + ")");
  ctx_ = std::min(o.ctx, c.ctx_train);
  o_.prefill_chunk = std::clamp(o_.prefill_chunk, 1, 512);
  const int max_batch = max_batch_ = 512 + o.parallel;
  pool_ = std::make_unique<ThreadPool>(o.threads);
  SessionOptions backend;
  backend.backend = o.backend, backend.device = o.device, backend.gpu_layers = o.gpu_layers, backend.kv_type = o.kv_type;
  const std::shared_ptr<DeviceModel> device = open_device_model(model.impl(), ctx_, max_batch, backend, *pool_);
  if (!device) net_ = std::make_unique<Transformer>(model.impl(), max_batch, *pool_, o.int8_decode);
  const DType kv_type = kv_dtype(o.kv_type);
  if (o.draft_model) {
    if (device) throw Error("serve: a draft model needs the CPU backend (--backend cpu)");
    drafter_ = std::make_unique<SlotDrafter>(*o.draft_model, model, o.parallel, ctx_, kv_type, *pool_);
  }
  for (int i = 0; i < o.parallel; ++i) {
    auto s = std::make_unique<Slot>();
    if (device)
      s->device = device->sequence();
    else
      s->kv = std::make_unique<KvCache>(c, ctx_, kv_type);
    s->cached.reserve(static_cast<size_t>(ctx_));
    slots_.push_back(std::move(s));
  }
  tokens_.reserve(static_cast<size_t>(max_batch));
  pos_.reserve(static_cast<size_t>(max_batch));
  kvs_.reserve(static_cast<size_t>(max_batch));
  row_slots_.reserve(static_cast<size_t>(max_batch));
  logit_rows_.reserve(static_cast<size_t>(o.parallel));
  logit_slots_.reserve(static_cast<size_t>(o.parallel));
  asks_.reserve(static_cast<size_t>(o.parallel));
  extended_.reserve(static_cast<size_t>(o.parallel));
  logits_.resize(static_cast<size_t>(o.parallel) * static_cast<size_t>(c.vocab_size));
  if (device) unused_logits_.resize(static_cast<size_t>(c.vocab_size));
  stats_.slots = o.parallel;
  thread_ = std::thread([this] { loop(); });
}

Engine::~Engine() {
  {
    std::lock_guard lk(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
  for (auto& s : slots_)
    if (s->job) s->job->publish({}, Finish::Cancelled, static_cast<int>(s->generated.size()));
  for (auto& j : queue_) j->publish({}, Finish::Cancelled, 0);
}

std::shared_ptr<Job> Engine::submit(CompletionRequest r) {
  if (r.prompt.empty()) throw Error("serve: empty prompt");
  if (static_cast<int64_t>(r.prompt.size()) >= ctx_) throw Error("serve: prompt does not fit the context");
  auto job = std::make_shared<Job>();
  job->prompt_tokens_ = static_cast<int>(r.prompt.size());
  job->request_ = std::move(r);
  {
    std::lock_guard lk(mu_);
    // Jobs in the queue first take the free slots; beyond those, `queue` may wait.
    if (static_cast<int>(queue_.size()) >= o_.queue + (o_.parallel - stats_.slots_busy)) throw QueueFull();
    queue_.push_back(job);
    ++stats_.requests;
    stats_.queue_depth = static_cast<int>(queue_.size());
  }
  cv_.notify_all();
  return job;
}

EngineStats Engine::stats() const {
  std::lock_guard lk(mu_);
  EngineStats s = stats_;
  // Tokens of the steps in the window after the first, over the time since the first
  // ended: decays to 0 when the server goes idle.
  const auto now = std::chrono::steady_clock::now();
  int total = 0;
  const std::chrono::steady_clock::time_point* first = nullptr;
  for (auto& [t, n] : recent_tokens_) {
    if (now - t > kRateWindow) continue;
    if (first) total += n;
    else first = &t;
  }
  const double span = first ? std::chrono::duration<double>(now - *first).count() : 0;
  s.decode_tokens_per_second = span > 0 ? total / span : 0;
  return s;
}

void Engine::loop() {
  for (;;) {
    {
      std::unique_lock lk(mu_);
      const bool busy = std::any_of(slots_.begin(), slots_.end(), [](auto& s) { return s->job != nullptr; });
      if (!busy) cv_.wait(lk, [&] { return stop_ || !queue_.empty(); });
      if (stop_) return;
    }
    admit();
    try {
      step();
    } catch (const std::exception& e) {  // never expected: end every request rather than the server
      std::fprintf(stderr, "minnow serve: forward pass failed: %s\n", e.what());
      for (auto& s : slots_)
        if (s->job) finish(*s, Finish::Cancelled);
    }
  }
}

// Gives waiting requests free slots, preferring the slot whose cache shares the longest
// prefix with the prompt, then the least recently used one.
void Engine::admit() {
  std::lock_guard lk(mu_);
  while (!queue_.empty()) {
    std::shared_ptr<Job> job = queue_.front();
    if (job->cancelled()) {
      queue_.pop_front();
      job->publish({}, Finish::Cancelled, 0);
      continue;
    }
    const auto& prompt = job->request_.prompt;
    Slot* best = nullptr;
    size_t best_common = 0;
    for (auto& s : slots_) {
      if (s->job) continue;
      size_t common = 0;
      while (common < s->cached.size() && common < prompt.size() && s->cached[common] == prompt[common]) ++common;
      if (!best || common > best_common || (common == best_common && s->last_used < best->last_used)) {
        best = s.get();
        best_common = common;
      }
    }
    if (!best) break;
    queue_.pop_front();
    Slot& s = *best;
    best_common = std::min(best_common, prompt.size() - 1);  // the last prompt token is always run, for its logits
    s.cached.resize(best_common);
    s.fed = best_common;
    s.job = job;
    s.sampler.emplace(job->request_.sampling, model_.info().vocab_size);
    s.constraint.reset();
    if (job->request_.grammar) {
      const Tokenizer& tok = *model_.impl().tokenizer;
      if (!vocab_trie_) vocab_trie_ = std::make_shared<const grammar::TokenTrie>(tok);
      s.constraint.emplace(job->request_.grammar, vocab_trie_, tok);
    }
    s.text.reset();
    s.stop = StopMatcher(job->request_.stop);
    s.generated.clear();
    s.decoding = false;
    const int lookup = job->request_.lookup_draft >= 0 ? job->request_.lookup_draft : o_.lookup_draft;
    s.draft_length.reset();
    s.draft_by_model = drafter_ && job->request_.lookup_draft < 0;
    s.lookup_first = s.draft_by_model ? std::min(o_.lookup_draft, kMaxLookupDraft) : 0;
    if (s.draft_by_model) s.draft_length.emplace(std::max(o_.draft_max, s.lookup_first));
    else if (lookup > 0 && net_) s.draft_length.emplace(std::min(lookup, kMaxLookupDraft));
    s.last_used = ++admissions_;
    stats_.prompt_tokens += prompt.size();
    stats_.reused_prompt_tokens += best_common;
  }
  stats_.queue_depth = static_cast<int>(queue_.size());
  stats_.slots_busy = static_cast<int>(std::count_if(slots_.begin(), slots_.end(), [](auto& s) { return s->job != nullptr; }));
}

void Engine::finish(Slot& s, Finish f) {
  std::string tail = f == Finish::Cancelled ? std::string{} : s.stop.push(s.text.flush());
  if (f != Finish::Cancelled) tail += s.stop.flush();
  s.job->publish(tail, f, static_cast<int>(s.generated.size()));
  s.job.reset();
  s.decoding = false;
}

// One forward pass: the next token of every generating slot (first, through the per-row
// kernels), then prompt chunks; then a token is sampled for every slot that needs one.
bool Engine::step() {
  for (auto& s : slots_)
    if (s->job && s->job->cancelled()) finish(*s, Finish::Cancelled);
  tokens_.clear();
  pos_.clear();
  kvs_.clear();
  row_slots_.clear();
  logit_rows_.clear();
  logit_slots_.clear();
  auto add_row = [&](Slot& s, int32_t token, bool wants_logits) {
    if (wants_logits) {
      logit_rows_.push_back(static_cast<int32_t>(tokens_.size()));
      logit_slots_.push_back(&s);
    }
    pos_.push_back(static_cast<int32_t>(s.cached.size() + static_cast<size_t>(s.taken)));
    tokens_.push_back(token);
    kvs_.push_back(s.kv.get());
    row_slots_.push_back(&s);
  };
  // Decoding slots: the sampled token, then the tokens proposed after it (speculation),
  // each row wanting logits to check the next; all through the per-row kernels, as plain
  // decoding runs them, so an accepted token's numbers are plain decoding's.
  propose_drafts();
  for (auto& s : slots_) {
    s->taken = 0;
    if (!s->job || !s->decoding) continue;
    add_row(*s, s->next, true);
    for (int32_t d : s->draft) {
      ++s->taken;
      add_row(*s, d, true);
    }
  }
  const int n_vector = static_cast<int>(tokens_.size());
  int budget = n_vector > 0 ? std::min(o_.prefill_chunk, max_batch_ - n_vector) : max_batch_;
  // Older requests' prompts first.
  std::vector<Slot*> prefill;  // at most `parallel` entries
  for (auto& s : slots_)
    if (s->job && !s->decoding) prefill.push_back(s.get());
  std::sort(prefill.begin(), prefill.end(), [](Slot* a, Slot* b) { return a->last_used < b->last_used; });
  for (Slot* s : prefill) {
    if (budget <= 0) break;
    const auto& prompt = s->job->request_.prompt;
    const int take = static_cast<int>(std::min(prompt.size() - s->fed, static_cast<size_t>(budget)));
    for (int i = 0; i < take; ++i) {
      const bool last = s->fed + static_cast<size_t>(i) + 1 == prompt.size();
      add_row(*s, prompt[s->fed + static_cast<size_t>(i)], last);
      ++s->taken;
    }
    budget -= take;
  }
  if (tokens_.empty()) {
    record_step(0, 0, 0);
    return false;
  }
  const size_t vocab = static_cast<size_t>(model_.info().vocab_size);
  if (logits_.size() < logit_rows_.size() * vocab) logits_.resize(logit_rows_.size() * vocab);  // drafts' rows

  if (net_)
    net_->forward(Transformer::Batch{tokens_.data(), pos_.data(), kvs_.data(), static_cast<int>(tokens_.size()), n_vector,
                                     logit_rows_.data(), static_cast<int>(logit_rows_.size())},
                  logits_.data());
  else
    forward_each_slot();
  for (auto& s : slots_) {
    if (!s->job) continue;
    if (s->decoding) {
      s->cached.push_back(s->next);
    } else if (s->taken > 0) {
      const auto& prompt = s->job->request_.prompt;
      s->cached.insert(s->cached.end(), prompt.begin() + static_cast<ptrdiff_t>(s->fed),
                       prompt.begin() + static_cast<ptrdiff_t>(s->fed) + s->taken);
      s->fed += static_cast<size_t>(s->taken);
    }
  }

  // A slot's logit rows are adjacent: after its last fed token, then after each proposed
  // token. A token is sampled from each in turn, exactly as plain decoding would (same
  // sampler state, same RNG draws); a proposed token equal to the one sampled before it
  // is kept (its K/V are already in the cache) and the next row is read, else the rest are
  // dropped (their cache rows get overwritten).
  const Tokenizer& tok = *model_.impl().tokenizer;
  int sampled = 0, drafted = 0, kept = 0;
  for (size_t i = 0; i < logit_slots_.size();) {
    Slot& s = *logit_slots_[i];
    size_t end = i + 1;
    while (end < logit_slots_.size() && logit_slots_[end] == &s) ++end;
    const CompletionRequest& r = s.job->request_;
    size_t accepted = 0;
    for (size_t row = i; row < end; ++row) {
      std::span<float> logits(&logits_[row * vocab], vocab);
      const int32_t id = s.sampler->sample(logits, s.cached, s.generated, s.constraint ? &*s.constraint : nullptr);
      s.generated.push_back(id);
      ++sampled;
      if ((!r.ignore_eos || s.constraint) && tok.is_end_of_generation(id)) {
        finish(s, Finish::Stop);
        break;
      }
      if (s.constraint) s.constraint->accept(id);
      std::string out = s.stop.push(s.text.push(tok.token_bytes(id)));
      if (s.stop.stopped()) {
        s.job->publish(out, Finish::Running, static_cast<int>(s.generated.size()));
        finish(s, Finish::Stop);
        break;
      }
      if (static_cast<int>(s.generated.size()) >= r.max_tokens || static_cast<int>(s.cached.size()) >= ctx_) {
        s.job->publish(out, Finish::Running, static_cast<int>(s.generated.size()));
        finish(s, Finish::Length);
        break;
      }
      if (!out.empty()) s.job->publish(out, Finish::Running, static_cast<int>(s.generated.size()));
      const size_t k = row - i;  // the draft token fed after this row, if any
      if (row + 1 < end && s.draft[k] == id) {
        s.cached.push_back(id);
        ++accepted;
        continue;
      }
      s.next = id;
      s.decoding = true;
      break;
    }
    if (s.draft_length && !s.draft.empty()) s.draft_length->record(static_cast<int>(s.draft.size()), static_cast<int>(accepted));
    drafted += static_cast<int>(s.draft.size());
    kept += static_cast<int>(accepted);
    i = end;
  }

  record_step(sampled, drafted, kept);
  return true;
}

// Proposals for the decoding slots that speculate, each continuing the slot's tokens and
// its sampled `next`: by prompt lookup, or by the draft model for all such slots at once
// (where lookup finds nothing, when both are on).
void Engine::propose_drafts() {
  int draft_rows = max_batch_ / 2;
  asks_.clear();
  extended_.clear();
  for (size_t i = 0; i < slots_.size(); ++i) {
    Slot& s = *slots_[i];
    s.draft.clear();
    if (!s.job || !s.decoding || !s.draft_length) continue;
    const auto& r = s.job->request_;
    const int room = std::min({s.draft_length->next(), draft_rows, r.max_tokens - static_cast<int>(s.generated.size()) - 1,
                               ctx_ - static_cast<int>(s.cached.size()) - 2});
    if (room <= 0) continue;
    draft_rows -= room;
    s.cached.push_back(s.next);  // the context the proposal continues (taken off below)
    extended_.push_back(&s);
    // Prompt lookup first where it is on (it costs nothing), the draft model where it finds nothing.
    if (!s.draft_by_model || s.lookup_first > 0) propose_by_lookup(s.cached, s.draft_by_model ? std::min(room, s.lookup_first) : room, s.draft);
    if (s.draft_by_model && s.draft.empty()) asks_.push_back({static_cast<int>(i), s.cached, std::min(room, o_.draft_max), &s.draft});
  }
  if (!asks_.empty()) drafter_->propose(asks_, o_.draft_min_p);
  for (Slot* s : extended_) s->cached.pop_back();
}

// A slot's rows are adjacent (its next token, or a chunk of its prompt), and only the last
// of them may want logits.
void Engine::forward_each_slot() {
  const size_t vocab = static_cast<size_t>(model_.info().vocab_size);
  size_t logit = 0;  // index into logit_rows_
  for (size_t r = 0; r < tokens_.size();) {
    Slot& s = *row_slots_[r];
    size_t end = r + 1;
    while (end < tokens_.size() && row_slots_[end] == &s) ++end;
    const bool wanted = logit < logit_rows_.size() && logit_rows_[logit] == static_cast<int32_t>(end - 1);
    float* out = wanted ? &logits_[logit++ * vocab] : unused_logits_.data();
    s.device->forward(&tokens_[r], static_cast<int>(end - r), pos_[r], out, false);
    r = end;
  }
}

void Engine::record_step(int sampled, int drafted, int accepted) {
  std::lock_guard lk(mu_);
  const auto now = std::chrono::steady_clock::now();
  stats_.completion_tokens += static_cast<uint64_t>(sampled);
  stats_.drafted_tokens += static_cast<uint64_t>(drafted);
  stats_.accepted_draft_tokens += static_cast<uint64_t>(accepted);
  stats_.slots_busy = static_cast<int>(std::count_if(slots_.begin(), slots_.end(), [](auto& s) { return s->job != nullptr; }));
  if (sampled == 0) return;
  recent_tokens_.emplace_back(now, sampled);
  while (now - recent_tokens_.front().first > kRateWindow) recent_tokens_.pop_front();
}

}  // namespace minnow::server
