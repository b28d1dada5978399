#include <algorithm>
#include <chrono>
#include <optional>

#include "base/error.hpp"
#include "base/thread_pool.hpp"
#include "grammar/token_constraint.hpp"
#include "kernels/ops.hpp"
#include "minnow/llm.hpp"
#include "models/model.hpp"
#include "models/sequence_forward.hpp"
#include "runtime/device_model.hpp"
#include "runtime/draft_model.hpp"
#include "runtime/kv_type.hpp"
#include "runtime/prompt_lookup.hpp"
#include "runtime/sampler.hpp"
#include "tokenizer/stream_decoder.hpp"

namespace minnow {
namespace {
double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace

Session::Session(const Model& model, const SessionOptions& o) : model_(model) {
  const ModelConfig& c = model.impl().config;
  if (o.ctx <= 0) throw Error("session: context size must be positive (got " + std::to_string(o.ctx) + ")");
  if (o.batch < 0) throw Error("session: batch size must be positive, or 0 for the default (got " + std::to_string(o.batch) + ")");
  if (o.threads < 0) throw Error("session: thread count must be >= 0 (got " + std::to_string(o.threads) + ")");
  ctx_ = std::min(o.ctx, c.ctx_train);
  const int batch = o.batch > 0 ? o.batch : o.backend == SessionOptions::Backend::Vulkan ? 512 : 256;
  batch_ = std::min(batch, ctx_);
  pool_ = std::make_unique<ThreadPool>(o.threads);
  if (auto device = open_device_model(model.impl(), ctx_, batch_, o, *pool_))
    net_ = device->sequence();
  else
    net_ = make_cpu_forward(model.impl(), ctx_, batch_, *pool_, o.int8_decode, kv_dtype(o.kv_type));
  logits_.resize(static_cast<size_t>(c.vocab_size));
  history_.reserve(static_cast<size_t>(ctx_));  // the decode loop appends without allocating
}

Session::~Session() = default;

int Session::context_size() const { return ctx_; }

void Session::feed(std::span<const int32_t> tokens, int pos0) {
  const int vocab = model_.info().vocab_size;
  for (int32_t id : tokens)
    if (id < 0 || id >= vocab)
      throw Error("session: token id " + std::to_string(id) + " is outside the vocabulary [0, " + std::to_string(vocab) + ")");
  if (pos0 + static_cast<int64_t>(tokens.size()) > ctx_)
    throw Error("session: " + std::to_string(pos0 + tokens.size()) + " tokens exceed the context size " +
                std::to_string(ctx_) + " (raise --ctx)");
  for (size_t i = 0; i < tokens.size(); i += static_cast<size_t>(batch_)) {
    int n = static_cast<int>(std::min(tokens.size() - i, static_cast<size_t>(batch_)));
    net_->forward(tokens.data() + i, n, pos0 + static_cast<int>(i), logits_.data(), false);
  }
}

std::span<const float> Session::eval(std::span<const int32_t> tokens) {
  if (tokens.empty()) throw Error("session: nothing to evaluate (empty token list)");
  size_t common = 0;
  while (common < history_.size() && common < tokens.size() && history_[common] == tokens[common]) ++common;
  if (common == tokens.size()) --common;  // re-run the last token to get its logits
  auto rest = tokens.subspan(common);
  feed(rest, static_cast<int>(common));  // throws before touching history_ on bad input
  history_.assign(tokens.begin(), tokens.end());
  return logits_;
}

void Session::eval_all(std::span<const int32_t> tokens, const std::function<void(int, std::span<const float>)>& fn) {
  const size_t vocab = static_cast<size_t>(model_.info().vocab_size);
  if (static_cast<int64_t>(tokens.size()) > ctx_)
    throw Error("session: " + std::to_string(tokens.size()) + " tokens exceed the context size " + std::to_string(ctx_));
  for (int32_t id : tokens)
    if (id < 0 || id >= static_cast<int32_t>(vocab))
      throw Error("session: token id " + std::to_string(id) + " is outside the vocabulary [0, " + std::to_string(vocab) + ")");
  history_.clear();
  std::vector<float> all(static_cast<size_t>(batch_) * vocab);
  for (size_t i = 0; i < tokens.size(); i += static_cast<size_t>(batch_)) {
    int n = static_cast<int>(std::min(tokens.size() - i, static_cast<size_t>(batch_)));
    net_->forward(tokens.data() + i, n, static_cast<int>(i), all.data(), true);
    history_.insert(history_.end(), tokens.begin() + static_cast<ptrdiff_t>(i), tokens.begin() + static_cast<ptrdiff_t>(i) + n);
    for (int t = 0; t < n; ++t) fn(static_cast<int>(i) + t, std::span<const float>(all).subspan(t * vocab, vocab));
  }
}

void Session::greedy_continuation(std::span<const int32_t> seq, int n, std::vector<int32_t>& out, float min_p) {
  out.clear();
  if (n <= 0 || seq.empty() || static_cast<int64_t>(seq.size()) >= ctx_) return;
  std::span<const float> logits = eval(seq);
  std::vector<float> scratch;
  for (int i = 0; i < n; ++i) {
    const int32_t id = confident_argmax(logits, min_p, scratch);
    if (id < 0) break;
    out.push_back(id);
    if (i + 1 == n || n_past() + 1 >= ctx_) break;
    net_->forward(&id, 1, n_past(), logits_.data(), false);
    history_.push_back(id);
  }
}

GenerateResult Session::generate(std::span<const int32_t> prompt, const GenerateOptions& o, const TokenCallback& on_token) {
  cancel_.store(false);
  const Tokenizer& tok = *model_.impl().tokenizer;
  if (o.draft_model) check_draft_vocabulary(o.draft_model->model_, model_, "session");
  std::optional<grammar::TokenConstraint> constraint;
  if (!o.grammar.empty()) {  // parsed before any work: a bad grammar fails fast
    auto g = std::make_shared<const grammar::Grammar>(grammar::parse_gbnf(o.grammar));
    if (!vocab_trie_) vocab_trie_ = std::make_shared<const grammar::TokenTrie>(tok);
    constraint.emplace(std::move(g), vocab_trie_, tok);
  }
  GenerateResult r;
  size_t common = 0;
  while (common < history_.size() && common < prompt.size() && history_[common] == prompt[common]) ++common;
  r.n_reused = static_cast<int>(std::min(common, prompt.size() - (prompt.empty() ? 0 : 1)));
  r.n_prompt = static_cast<int>(prompt.size()) - r.n_reused;
  auto t0 = std::chrono::steady_clock::now();
  eval(prompt);
  r.prompt_seconds = seconds_since(t0);

  Sampler sampler(o.sampling, model_.info().vocab_size);
  StreamDecoder text;
  // Speculation: `draft` was run through the model after the last sampled token, so rows of
  // `rows` hold the logits after each of its tokens; they stay valid while sampling picks
  // exactly the drafted tokens (whose K/V are then already cached). A refused draft's K/V
  // are overwritten by the next pass (attention reads only positions before its own).
  const size_t vocab = static_cast<size_t>(model_.info().vocab_size);
  const int max_draft = std::max(0, std::min(std::max(o.draft_model ? o.draft_max : 0, o.lookup_draft), batch_ - 1));
  DraftLength draft_length(max_draft);
  std::vector<int32_t> draft, batch;
  std::vector<float> rows;
  size_t next_draft = 0;  // the drafted token the next sample may match
  std::span<float> logits = logits_;
  t0 = std::chrono::steady_clock::now();
  // history_ holds exactly the tokens whose K/V are in the cache.
  for (;;) {
    if (r.n_generated >= o.max_tokens) { r.stop = GenerateResult::Stop::MaxTokens; break; }
    if (cancel_.load()) { r.stop = GenerateResult::Stop::Cancelled; break; }
    int32_t id = sampler.sample(logits, history_, {}, constraint ? &*constraint : nullptr);
    ++r.n_generated;
    if ((o.stop_at_end_of_generation || constraint) && tok.is_end_of_generation(id)) {
      r.stop = GenerateResult::Stop::EndOfGeneration;
      break;
    }
    if (constraint) constraint->accept(id);
    if (!on_token(text.push(tok.token_bytes(id)), id)) { r.stop = GenerateResult::Stop::Cancelled; break; }
    if (r.n_generated >= o.max_tokens) { r.stop = GenerateResult::Stop::MaxTokens; break; }
    if (n_past() >= ctx_) { r.stop = GenerateResult::Stop::ContextFull; break; }
    if (next_draft < draft.size() && id == draft[next_draft]) {  // computed already
      history_.push_back(id);
      logits = std::span<float>(rows).subspan(++next_draft * vocab, vocab);
      ++r.n_accepted;
      if (next_draft == draft.size()) draft_length.record(static_cast<int>(draft.size()), static_cast<int>(draft.size()));
      continue;
    }
    if (next_draft < draft.size()) draft_length.record(static_cast<int>(draft.size()), static_cast<int>(next_draft));
    draft.clear();
    next_draft = 0;
    if (max_draft > 0) {
      history_.push_back(id);  // the sequence to look in ends with id
      const int room = std::min(draft_length.next(), ctx_ - n_past() - 1);
      // Prompt lookup first (it costs nothing), the draft model where it finds nothing.
      if (room > 0 && o.lookup_draft > 0) propose_by_lookup(history_, std::min(room, o.lookup_draft), draft);
      if (room > 0 && draft.empty() && o.draft_model)
        o.draft_model->greedy_continuation(history_, std::min(room, o.draft_max), draft, o.draft_min_p);
      history_.pop_back();
    }
    if (draft.empty()) {
      net_->forward(&id, 1, n_past(), logits_.data(), false);
      logits = logits_;
    } else {
      batch.assign(1, id);
      batch.insert(batch.end(), draft.begin(), draft.end());
      rows.resize(batch.size() * vocab);
      net_->forward(batch.data(), static_cast<int>(batch.size()), n_past(), rows.data(), true);
      logits = std::span<float>(rows).first(vocab);
      r.n_drafted += static_cast<int>(draft.size());
    }
    history_.push_back(id);
  }
  std::string tail = text.flush();
  if (!tail.empty()) on_token(tail, -1);
  r.generate_seconds = seconds_since(t0);
  return r;
}

}  // namespace minnow
