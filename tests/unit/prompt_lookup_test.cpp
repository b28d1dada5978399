// Prompt-lookup proposals and the adaptive draft length.
#include <gtest/gtest.h>

#include <vector>

#include "runtime/prompt_lookup.hpp"

namespace minnow {
namespace {

std::vector<int32_t> propose(const std::vector<int32_t>& seq, int n) {
  std::vector<int32_t> out;
  propose_by_lookup(seq, n, out);
  return out;
}

TEST(PromptLookup, ProposesWhatFollowedTheLatestEarlierMatch) {
  // ... 1 2 3 [4 5 6] ... 7 1 2 3 [9 9] ... 1 2 3: the latest match is the second.
  EXPECT_EQ(propose({1, 2, 3, 4, 5, 6, 7, 1, 2, 3, 9, 9, 8, 1, 2, 3}, 2), (std::vector<int32_t>{9, 9}));
  EXPECT_EQ(propose({1, 2, 3, 4, 5, 6, 7, 1, 2, 3}, 8), (std::vector<int32_t>{4, 5, 6, 7, 1, 2, 3}));
  // A longer match wins over a later shorter one.
  EXPECT_EQ(propose({5, 1, 2, 3, 4, 9, 0, 3, 4, 7, 1, 2, 3, 4}, 1), (std::vector<int32_t>{9}));
}

TEST(PromptLookup, NothingWithoutARepeatedPairOrRoom) {
  EXPECT_TRUE(propose({1, 2, 3, 4}, 4).empty());
  EXPECT_TRUE(propose({1, 2, 1}, 4).empty());  // a single repeated token is not enough
  EXPECT_TRUE(propose({}, 4).empty());
  EXPECT_TRUE(propose({1, 2, 1, 2}, 0).empty());
  EXPECT_EQ(propose({7, 7, 7, 7}, 3), (std::vector<int32_t>{7}));  // overlapping runs
}

TEST(PromptLookup, DraftLengthAdapts) {
  DraftLength d(8);
  EXPECT_EQ(d.next(), 4);
  d.record(4, 4);
  EXPECT_EQ(d.next(), 6);
  d.record(6, 6);
  d.record(8, 8);
  EXPECT_EQ(d.next(), 8);
  d.record(8, 3);  // partly kept: unchanged
  EXPECT_EQ(d.next(), 8);
  d.record(8, 0);
  d.record(4, 0);
  d.record(2, 0);
  d.record(1, 0);
  EXPECT_EQ(d.next(), 1);
}

}  // namespace
}  // namespace minnow
