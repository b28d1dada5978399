// Draft tokens for speculative decoding without a second model (prompt lookup): where the
// sequence's last n tokens occurred before (the latest such place, n from kLongest down to
// kShortest), the tokens that followed them then. Editing, summarizing and code answers
// repeat long runs of their prompt, which this finds.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

namespace minnow {

// Up to max_tokens proposals into out (cleared; empty when nothing matches).
void propose_by_lookup(std::span<const int32_t> seq, int max_tokens, std::vector<int32_t>& out);

// How many tokens to propose next: grows while drafts are accepted whole, halves when the
// first is refused (a refused token costs a row of the verifying pass).
class DraftLength {
 public:
  explicit DraftLength(int max) : max_(max), cur_(max < 4 ? max : 4) {}
  int next() const { return cur_; }
  void record(int proposed, int accepted);

 private:
  int max_, cur_;
};

}  // namespace minnow
