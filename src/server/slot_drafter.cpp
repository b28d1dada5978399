#include "server/slot_drafter.hpp"

#include <algorithm>

#include "kernels/ops.hpp"
#include "models/kv_cache.hpp"
#include "models/model.hpp"
#include "models/transformer.hpp"
#include "runtime/draft_model.hpp"

namespace minnow::server {

namespace {
constexpr int kMaxRows = 256;  // rows per draft pass (a new prompt catches up in chunks)
}

SlotDrafter::SlotDrafter(const Model& draft, const Model& target, int slots, int ctx, DType kv_type, ThreadPool& pool)
    : model_(draft), ctx_(ctx) {
  check_draft_vocabulary(draft, target, "serve");
  // int8 activations: proposals are checked by the model, so their precision only changes
  // how many are kept, and int8 halves the integer work.
  net_ = std::make_unique<Transformer>(draft.impl(), std::max(kMaxRows, slots), pool, true);
  for (int i = 0; i < slots; ++i) {
    kv_.push_back(std::make_unique<KvCache>(draft.impl().config, ctx, kv_type));
    cached_.emplace_back().reserve(static_cast<size_t>(ctx));
  }
}

SlotDrafter::~SlotDrafter() = default;

void SlotDrafter::pass() {
  const int n = static_cast<int>(tokens_.size());
  const size_t vocab = static_cast<size_t>(model_.info().vocab_size);
  if (logits_.size() < want_.size() * vocab) logits_.resize(want_.size() * vocab);
  const int n_vector = n < kernels::kPrefillMinTokens ? n : 0;  // as a single sequence would choose
  net_->forward(Transformer::Batch{tokens_.data(), pos_.data(), kvs_.data(), n, n_vector, want_.data(),
                                   static_cast<int>(want_.size())},
                logits_.data());
}

bool SlotDrafter::take(const Ask& ask, size_t row, float min_p) {
  const size_t vocab = static_cast<size_t>(model_.info().vocab_size);
  const int32_t id = confident_argmax(std::span<const float>(logits_).subspan(row * vocab, vocab), min_p, scratch_);
  if (id >= 0) ask.out->push_back(id);
  return id >= 0;
}

void SlotDrafter::propose(std::span<const Ask> asks, float min_p) {
  // Per ask: the next context token its cache lacks, its most proposals, whether it still proposes.
  auto& fed = fed_;
  auto& limit = limit_;
  auto& live = live_;
  fed.assign(asks.size(), 0);
  limit.assign(asks.size(), 0);
  live.assign(asks.size(), false);
  for (size_t a = 0; a < asks.size(); ++a) {
    const Ask& k = asks[a];
    k.out->clear();
    const int64_t n = static_cast<int64_t>(k.context.size());
    limit[a] = static_cast<int>(std::min<int64_t>(k.max_tokens, ctx_ - n));
    live[a] = n > 0 && limit[a] > 0;
    if (!live[a]) continue;
    auto& cached = cached_[static_cast<size_t>(k.slot)];
    size_t common = 0;
    while (common < cached.size() && common < k.context.size() && cached[common] == k.context[common]) ++common;
    common = std::min(common, k.context.size() - 1);  // the last token runs again, for its logits
    cached.resize(common);
    fed[a] = common;
  }
  auto add_row = [&](size_t a, int32_t token, bool want) {
    auto& cached = cached_[static_cast<size_t>(asks[a].slot)];
    if (want) want_.push_back(static_cast<int32_t>(tokens_.size()));
    tokens_.push_back(token);
    pos_.push_back(static_cast<int32_t>(cached.size()));
    kvs_.push_back(kv_[static_cast<size_t>(asks[a].slot)].get());
    cached.push_back(token);
  };
  auto clear_rows = [&] {
    tokens_.clear();
    pos_.clear();
    kvs_.clear();
    want_.clear();
    owners_.clear();
  };
  // Catch up: each cache is brought to its context (usually the one or few tokens accepted
  // since the last step; a whole prompt after admission), in passes of at most kMaxRows;
  // the row of a context's last token gives the first proposal.
  for (;;) {
    clear_rows();
    for (size_t a = 0; a < asks.size() && tokens_.size() < kMaxRows; ++a) {
      const auto& ctx = asks[a].context;
      while (live[a] && fed[a] < ctx.size() && tokens_.size() < kMaxRows) {
        const bool last = fed[a] + 1 == ctx.size();
        if (last) owners_.push_back(a);
        add_row(a, ctx[fed[a]++], last);
      }
    }
    if (tokens_.empty()) break;
    pass();
    for (size_t i = 0; i < owners_.size(); ++i) live[owners_[i]] = take(asks[owners_[i]], i, min_p);
  }
  // Then one pass per proposed token, a row for every ask still going.
  for (;;) {
    clear_rows();
    for (size_t a = 0; a < asks.size(); ++a) {
      if (!live[a] || asks[a].out->empty() || static_cast<int>(asks[a].out->size()) >= limit[a]) continue;
      owners_.push_back(a);
      add_row(a, asks[a].out->back(), true);
    }
    if (tokens_.empty()) break;
    pass();
    for (size_t i = 0; i < owners_.size(); ++i) live[owners_[i]] = take(asks[owners_[i]], i, min_p);
  }
}

}  // namespace minnow::server
