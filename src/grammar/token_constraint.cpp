#include "grammar/token_constraint.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "base/error.hpp"
#include "tokenizer/tokenizer.hpp"
#include "tokenizer/utf8.hpp"

namespace minnow::grammar {

TokenTrie::TokenTrie(const Tokenizer& tok) {
  std::vector<std::pair<std::string_view, int32_t>> items;
  for (int32_t id = 0; id < tok.vocab_size(); ++id) {
    std::string_view b = tok.token_bytes(id);
    if (!b.empty()) items.emplace_back(b, id);
    depth_ = std::max(depth_, b.size());
  }
  std::sort(items.begin(), items.end());
  nodes_.emplace_back();
  // Node `n` holds items [lo, hi), which share their first `d` bytes; shorter ones sort first.
  auto build = [&](auto& self, uint32_t n, size_t lo, size_t hi, size_t d) -> void {
    nodes_[n].first_token = static_cast<uint32_t>(tokens_.size());
    for (; lo < hi && items[lo].first.size() == d; ++lo) tokens_.push_back(items[lo].second);
    nodes_[n].n_tokens = static_cast<uint32_t>(tokens_.size()) - nodes_[n].first_token;
    std::vector<std::pair<size_t, size_t>> groups;
    for (size_t i = lo; i < hi;) {
      size_t j = i;
      while (j < hi && items[j].first[d] == items[i].first[d]) ++j;
      groups.emplace_back(i, j);
      i = j;
    }
    nodes_[n].first_child = static_cast<uint32_t>(nodes_.size());
    nodes_[n].n_children = static_cast<uint32_t>(groups.size());
    for (auto& [a, b] : groups) {
      nodes_.emplace_back();
      nodes_.back().byte = static_cast<uint8_t>(items[a].first[d]);
    }
    for (size_t c = 0; c < groups.size(); ++c) self(self, nodes_[n].first_child + static_cast<uint32_t>(c), groups[c].first, groups[c].second, d + 1);
  };
  build(build, 0, 0, items.size(), 0);
}

TokenConstraint::TokenConstraint(std::shared_ptr<const Grammar> g, std::shared_ptr<const TokenTrie> trie,
                                 const Tokenizer& tok)
    : matcher_(std::move(g)), trie_(std::move(trie)), tok_(tok), states_(matcher_.initial()) {
  scratch_.resize(trie_->depth() + 1);
}

// The least code point a UTF-8 sequence of n bytes may encode: anything less is an overlong
// form, which a model could use to spell an allowed character in invalid bytes.
static uint32_t least_code_point(uint8_t n) { return n == 2 ? 0x80 : n == 3 ? 0x800 : 0x10000; }

bool TokenConstraint::step_byte(const States& in, Partial p, uint8_t b, States& out, Partial& po) {
  if (p.need == 0) {
    const size_t n = utf8_sequence_length(b);
    if (n == 0) return false;
    if (n == 1) {
      po = {};
      matcher_.advance(in, b, out);
      return !out.empty();
    }
    po = {static_cast<uint32_t>(b & (0x7F >> n)), static_cast<uint8_t>(n - 1), static_cast<uint8_t>(n)};
  } else {
    if ((b & 0xC0) != 0x80) return false;
    po = {(p.value << 6) | (b & 0x3Fu), static_cast<uint8_t>(p.need - 1), p.length};
    if (po.need == 0) {
      const uint32_t c = po.value;
      if (c < least_code_point(po.length) || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return false;
      matcher_.advance(in, c, out);
      return !out.empty();
    }
  }
  // Still inside a character: some stack must accept one of the code points it can become.
  const uint32_t lo = std::max(po.value << (6 * po.need), least_code_point(po.length));
  const uint32_t hi = std::min((po.value << (6 * po.need)) | ((1u << (6 * po.need)) - 1), 0x10FFFFu);
  if (lo > hi || !matcher_.accepts_any(in, lo, hi)) return false;
  out = in;
  return true;
}

bool TokenConstraint::walk_bytes(std::string_view bytes, States& out, Partial& po) {
  States cur = states_, next;
  Partial p = partial_;
  for (char c : bytes) {
    if (!step_byte(cur, p, static_cast<uint8_t>(c), next, p)) return false;
    std::swap(cur, next);
  }
  out = std::move(cur);
  po = p;
  return true;
}

bool TokenConstraint::allows(int32_t id) {
  if (tok_.is_end_of_generation(id)) return complete();
  std::string_view bytes = tok_.token_bytes(id);
  if (bytes.empty()) return false;  // control tokens are not text
  States s;
  Partial p;
  return walk_bytes(bytes, s, p);
}

void TokenConstraint::walk_trie(uint32_t node, const States& s, Partial p, size_t depth, std::vector<uint8_t>& out) {
  const auto& nodes = trie_->nodes();
  const TokenTrie::Node& n = nodes[node];
  for (uint32_t c = n.first_child; c < n.first_child + n.n_children; ++c) {
    States& next = scratch_[depth];
    Partial np;
    if (!step_byte(s, p, nodes[c].byte, next, np)) continue;
    for (uint32_t t = 0; t < nodes[c].n_tokens; ++t) out[static_cast<size_t>(trie_->tokens()[nodes[c].first_token + t])] = 1;
    if (nodes[c].n_children) walk_trie(c, next, np, depth + 1, out);
  }
}

void TokenConstraint::allowed(std::vector<uint8_t>& out) {
  out.assign(static_cast<size_t>(tok_.vocab_size()), 0);
  walk_trie(0, states_, partial_, 0, out);
  bool any = false;
  for (uint8_t a : out) any |= a != 0;
  const bool end = complete() || !any;
  for (int32_t id : tok_.end_of_generation_ids()) out[static_cast<size_t>(id)] = end;
}

void TokenConstraint::accept(int32_t id) {
  if (tok_.is_end_of_generation(id)) return;  // the caller stops (a forced stop may leave the output incomplete)
  States s;
  Partial p;
  if (!walk_bytes(tok_.token_bytes(id), s, p))
    throw Error("grammar: token " + std::to_string(id) + " does not continue the grammar");
  states_ = std::move(s);
  partial_ = p;
}

}  // namespace minnow::grammar
