#include "grammar/matcher.hpp"

#include <algorithm>
#include <unordered_set>

#include "base/error.hpp"

namespace minnow::grammar {
namespace {

void add_sorted(States& s, StackId id) {
  auto it = std::lower_bound(s.begin(), s.end(), id);
  if (it == s.end() || *it != id) s.insert(it, id);
}

constexpr size_t kMaxStacks = 1u << 22;  // an ambiguous grammar must not take all memory
// A grammar so ambiguous that more parses are alive at once (`"x"? "x"? ...` keeps one per
// item) is followed along the first ones only, so one step stays bounded.
constexpr size_t kMaxAlive = 256;
void cap(States& s) {
  if (s.size() > kMaxAlive) s.resize(kMaxAlive);  // kDone, if there, sorts first and stays
}

}  // namespace

Matcher::Matcher(std::shared_ptr<const Grammar> g) : g_(std::move(g)) {
  nodes_.emplace_back(0, kDone);  // the empty stack
  for (uint32_t alt : g_->rules[g_->root]) expand(alt, kDone, initial_);
  cap(initial_);
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

void Matcher::expand(uint32_t pos0, StackId below0, States& out) {
  // A work list, not recursion: a grammar from a request may chain thousands of references
  // (or of optional items) before a character. Each (position, stack below) is expanded
  // once, so alternatives that can all be empty do not multiply the work.
  std::vector<std::pair<uint32_t, StackId>> work{{pos0, below0}};
  std::unordered_set<uint64_t> seen;
  while (!work.empty()) {
    const auto [pos, below] = work.back();
    work.pop_back();
    if (!seen.insert((static_cast<uint64_t>(pos) << 32) | below).second) continue;
    const Symbol& sym = g_->symbols[pos];
    switch (sym.kind) {
      case Symbol::Kind::End:  // this alternative is done: on with what the stack holds below
        if (below == kDone) add_sorted(out, kDone);
        else work.push_back(nodes_[below]);
        break;
      case Symbol::Kind::Chars:
        add_sorted(out, intern(pos, below));
        break;
      case Symbol::Kind::Rule: {
        // What follows the reference waits below; when nothing does (a rule's last
        // symbol), the reference is a tail call and the stack does not grow: repetitions
        // written as right recursion match in constant depth.
        const StackId rest = g_->symbols[pos + 1].kind == Symbol::Kind::End ? below : intern(pos + 1, below);
        for (uint32_t alt : g_->rules[sym.index]) work.emplace_back(alt, rest);
        break;
      }
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
  cap(out);
}

bool Matcher::accepts_any(const States& s, uint32_t lo, uint32_t hi) const {
  for (StackId id : s)
    if (id != kDone && g_->char_sets[g_->symbols[nodes_[id].first].index].intersects(lo, hi)) return true;
  return false;
}

}  // namespace minnow::grammar
