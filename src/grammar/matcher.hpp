// Runs a grammar over code points as a pushdown automaton with several stacks at once
// (the grammar may be ambiguous). A stack lists, top first, the positions in the
// grammar's symbols still to match; its top is always a character set, or it is empty
// (the output may end there). Stacks are interned (one id per distinct stack) and each
// step is memoized, so matching a whole vocabulary's worth of tokens repeats little work.
#pragma once
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "grammar/gbnf.hpp"

namespace minnow::grammar {

using StackId = uint32_t;           // kDone: the empty stack
using States = std::vector<StackId>;  // sorted, no repeats; empty: nothing can follow
constexpr StackId kDone = 0;

class Matcher {
 public:
  explicit Matcher(std::shared_ptr<const Grammar> g);

  const States& initial() const { return initial_; }
  // Every stack of `from` that accepts code point c, advanced past it (into `out`).
  void advance(const States& from, uint32_t c, States& out);
  // Some stack accepts a code point in [lo, hi] (a character cut off by a token's end).
  bool accepts_any(const States& s, uint32_t lo, uint32_t hi) const;
  static bool can_end(const States& s) { return !s.empty() && s.front() == kDone; }

 private:
  StackId intern(uint32_t pos, StackId below);
  // The stack with `pos` on top of `below`, its rule references expanded.
  void expand(uint32_t pos, StackId below, States& out);
  const States& step(StackId s, uint32_t c);

  std::shared_ptr<const Grammar> g_;
  std::vector<std::pair<uint32_t, StackId>> nodes_;  // id -> (top position, the stack below)
  std::unordered_map<uint64_t, StackId> ids_;
  std::unordered_map<uint64_t, States> steps_;  // (stack, code point) -> stacks after it
  States initial_;
};

}  // namespace minnow::grammar
