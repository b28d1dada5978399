#include "runtime/prompt_lookup.hpp"

#include <algorithm>

namespace minnow {
namespace {
constexpr int kLongest = 4, kShortest = 2;  // a single repeated token predicts too little
}  // namespace

void propose_by_lookup(std::span<const int32_t> seq, int max_tokens, std::vector<int32_t>& out) {
  out.clear();
  const auto len = static_cast<int64_t>(seq.size());
  for (int n = kLongest; n >= kShortest && out.empty(); --n) {
    if (len <= n) continue;
    const auto tail = seq.last(static_cast<size_t>(n));
    // The latest earlier start whose n tokens equal the tail and that has a follower.
    for (int64_t start = len - n - 1; start >= 0; --start) {
      if (!std::equal(tail.begin(), tail.end(), seq.begin() + start)) continue;
      const int64_t from = start + n, to = std::min(len, from + max_tokens);
      out.assign(seq.begin() + from, seq.begin() + to);
      break;
    }
  }
}

void DraftLength::record(int proposed, int accepted) {
  if (accepted == proposed) cur_ = std::min(max_, cur_ + 2);
  else if (accepted == 0) cur_ = std::max(1, cur_ / 2);
}

}  // namespace minnow
