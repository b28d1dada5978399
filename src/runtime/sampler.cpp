#include "runtime/sampler.hpp"

#include <algorithm>
#include <cmath>

namespace minnow {

Sampler::Sampler(const SamplingOptions& o, int vocab_size) : o_(o), state_(o.seed) {
  cand_.reserve(static_cast<size_t>(vocab_size));
}

double Sampler::uniform() {
  uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * (1.0 / 9007199254740992.0);
}

void Sampler::penalize_generated(std::span<float> logits, std::span<const int32_t> generated) {
  const int32_t n = static_cast<int32_t>(logits.size());
  cand_.clear();  // (unused, id) sorted by id: equal ids form runs of length count
  for (int32_t id : generated)
    if (id >= 0 && id < n) cand_.emplace_back(0.0f, id);
  std::sort(cand_.begin(), cand_.end(), [](auto& a, auto& b) { return a.second < b.second; });
  for (size_t i = 0; i < cand_.size();) {
    size_t j = i;
    while (j < cand_.size() && cand_[j].second == cand_[i].second) ++j;
    logits[static_cast<size_t>(cand_[i].second)] -= static_cast<float>(j - i) * o_.frequency_penalty + o_.presence_penalty;
    i = j;
  }
}

int32_t Sampler::draw() {
  double total = 0;
  for (auto& c : cand_) total += c.first;
  double r = uniform() * total;
  for (auto& c : cand_) {
    r -= c.first;
    if (r < 0) return c.second;
  }
  return cand_.back().second;
}

// Every disallowed logit to -inf, then greedy or a draw at the temperature.
int32_t Sampler::sample_allowed(std::span<float> logits, grammar::TokenConstraint& grammar) {
  grammar.allowed(allowed_);
  for (size_t i = 0; i < logits.size(); ++i)
    if (!allowed_[i]) logits[i] = -INFINITY;
  const int32_t best = static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
  if (o_.temperature <= 0.0f) return best;
  const float mx = logits[static_cast<size_t>(best)];
  cand_.clear();
  for (int32_t i = 0; i < static_cast<int32_t>(logits.size()); ++i)
    if (allowed_[static_cast<size_t>(i)]) cand_.emplace_back(std::exp((logits[static_cast<size_t>(i)] - mx) / o_.temperature), i);
  return draw();
}

int32_t Sampler::sample(std::span<float> logits, std::span<const int32_t> recent, std::span<const int32_t> generated,
                        grammar::TokenConstraint* grammar) {
  const int32_t n = static_cast<int32_t>(logits.size());
  if (o_.presence_penalty != 0.0f || o_.frequency_penalty != 0.0f) penalize_generated(logits, generated);
  if (o_.repeat_penalty != 1.0f && o_.repeat_last_n != 0) {
    size_t window = o_.repeat_last_n < 0 ? recent.size() : std::min(recent.size(), static_cast<size_t>(o_.repeat_last_n));
    // Each distinct recent token is penalized once (as transformers does).
    cand_.clear();
    for (int32_t id : recent.last(window))
      if (id >= 0 && id < n) cand_.emplace_back(0.0f, id);
    std::sort(cand_.begin(), cand_.end(), [](auto& a, auto& b) { return a.second < b.second; });
    cand_.erase(std::unique(cand_.begin(), cand_.end(), [](auto& a, auto& b) { return a.second == b.second; }), cand_.end());
    for (auto& c : cand_) {
      float& l = logits[static_cast<size_t>(c.second)];
      l = l > 0 ? l / o_.repeat_penalty : l * o_.repeat_penalty;
    }
  }
  if (o_.temperature <= 0.0f) {
    const int32_t best = static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
    return !grammar || grammar->allows(best) ? best : sample_allowed(logits, *grammar);
  }

  // Candidates stay in id order unless a filter needs them by probability: a full sort of
  // a 50k-150k vocabulary would cost more than the forward pass of a small model.
  cand_.clear();
  for (int32_t i = 0; i < n; ++i) cand_.emplace_back(logits[static_cast<size_t>(i)] / o_.temperature, i);
  auto by_value = [](const auto& a, const auto& b) { return a.first > b.first || (a.first == b.first && a.second < b.second); };
  bool sorted = false;
  if (o_.top_k > 0 && o_.top_k < n) {
    std::partial_sort(cand_.begin(), cand_.begin() + o_.top_k, cand_.end(), by_value);
    cand_.resize(static_cast<size_t>(o_.top_k));
    sorted = true;
  }
  // Softmax over the survivors.
  float mx = -INFINITY;
  for (auto& c : cand_) mx = std::max(mx, c.first);
  double sum = 0;
  for (auto& c : cand_) sum += (c.first = std::exp(c.first - mx));
  for (auto& c : cand_) c.first = static_cast<float>(c.first / sum);
  const float top_prob = static_cast<float>(1.0 / sum);  // the maximum's exp is 1
  if (o_.top_p < 1.0f) {
    // Sort only as many of the most likely as it takes to reach top_p (usually a few dozen).
    size_t k = sorted ? cand_.size() : std::min<size_t>(64, cand_.size()), keep = 0;
    for (;;) {
      if (!sorted) std::partial_sort(cand_.begin(), cand_.begin() + static_cast<ptrdiff_t>(k), cand_.end(), by_value);
      double cum = 0;
      for (keep = 0; keep < k;) {
        cum += cand_[keep++].first;
        if (cum >= o_.top_p) break;
      }
      if (cum >= o_.top_p || k == cand_.size()) break;
      k = std::min(cand_.size(), k * 4);
    }
    cand_.resize(std::max<size_t>(keep, 1));
    sorted = true;
  }
  if (o_.min_p > 0.0f) {
    const float floor = top_prob * o_.min_p;
    std::erase_if(cand_, [&](const auto& c) { return c.first < floor; });  // keeps the order, and the maximum
  }
  const int32_t id = draw();
  if (!grammar || grammar->allows(id)) return id;
  // Rejection: draw again among the survivors the grammar allows (the same distribution as
  // drawing from them alone); asked token by token while there are few.
  constexpr size_t kAskEach = 512;
  if (cand_.size() <= kAskEach) {
    std::erase_if(cand_, [&](const auto& c) { return c.second == id || !grammar->allows(c.second); });
  } else {
    grammar->allowed(allowed_);
    std::erase_if(cand_, [&](const auto& c) { return !allowed_[static_cast<size_t>(c.second)]; });
  }
  return cand_.empty() ? sample_allowed(logits, *grammar) : draw();
}

}  // namespace minnow
