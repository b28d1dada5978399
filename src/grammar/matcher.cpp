#include "grammar/matcher.hpp"

#include <algorithm>

#include "base/error.hpp"

namespace minnow::grammar {
namespace {

void add_sorted(States& s, StackId id) {
  auto it = std::lower_bound(s.begin(), s.end(), id);
  if (it == s.end() || *it != id) s.insert(it, id);
}

constexpr size_t kMaxStacks = 1u << 22;  // an ambiguous grammar must not take all memory

}  // namespace

Matcher::Matcher(std::shared_ptr<const Grammar> g) : g_(std::move(g)) {
  nodes_.emplace_back(0, kDone);  // the empty stack
  for (uint32_t alt : g_->rules[g_->root]) expand(alt, kDone, initial_);
}

StackId Matcher::intern(uint32_t pos, StackId below) {
  const uint64_t key = (static_cast<uint64_t>(pos) << 32) | below;
  auto [it, added] = ids_.emplace(key, static_cast<StackId>(nodes_.size()));
  if (added) {
    if (nodes_.size() >= kMaxStacks) throw Error("grammar: too ambiguous (over 4M distinct matcher stacks)");
    nodes_.emplace_back(pos, below);
  }
  return it->second;
}

void Matcher::expand(uint32_t pos, StackId below, States& out) {
  const Symbol& sym = g_->symbols[pos];
  switch (sym.kind) {
    case Symbol::Kind::End:  // this alternative is done: on with what the stack holds below
      if (below == kDone) return add_sorted(out, kDone);
      return expand(nodes_[below].first, nodes_[below].second, out);
    case Symbol::Kind::Chars:
      return add_sorted(out, intern(pos, below));
    case Symbol::Kind::Rule: {
      // What follows the reference waits below; when nothing does (a rule's last
      // symbol), the reference is a tail call and the stack does not grow: repetitions
      // written as right recursion match in constant depth.
      const StackId rest = g_->symbols[pos + 1].kind == Symbol::Kind::End ? below : intern(pos + 1, below);
      for (uint32_t alt : g_->rules[sym.index]) {
        if (g_->symbols[alt].kind == Symbol::Kind::End) {  // an empty alternative
          if (rest == kDone) add_sorted(out, kDone);
          else expand(nodes_[rest].first, nodes_[rest].second, out);
        } else {
          expand(alt, rest, out);
        }
      }
      return;
    }
  }
}

const States& Matcher::step(StackId s, uint32_t c) {
  const uint64_t key = (static_cast<uint64_t>(s) << 21) | c;  // code points take 21 bits
  auto it = steps_.find(key);
  if (it != steps_.end()) return it->second;
  States next;
  if (s != kDone) {
    const auto [pos, below] = nodes_[s];
    if (g_->char_sets[g_->symbols[pos].index].contains(c)) expand(pos + 1, below, next);
  }
  return steps_.emplace(key, std::move(next)).first->second;
}

void Matcher::advance(const States& from, uint32_t c, States& out) {
  out.clear();
  for (StackId s : from) {
    const States& next = step(s, c);
    if (out.empty()) out = next;
    else for (StackId n : next) add_sorted(out, n);
  }
}

bool Matcher::accepts_any(const States& s, uint32_t lo, uint32_t hi) const {
  for (StackId id : s)
    if (id != kDone && g_->char_sets[g_->symbols[nodes_[id].first].index].intersects(lo, hi)) return true;
  return false;
}

}  // namespace minnow::grammar
