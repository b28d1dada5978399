#include <gtest/gtest.h>

#include <vector>

#include "runtime/sampler.hpp"

using namespace minnow;

namespace {
std::vector<float> ramp(int n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<float>(i % 7) * 0.5f + static_cast<float>(i) * 0.01f;
  return v;
}
}  // namespace

TEST(Sampler, GreedyPicksArgmax) {
  SamplingOptions o;
  o.temperature = 0;
  Sampler s(o, 100);
  auto l = ramp(100);
  EXPECT_EQ(s.sample(l, {}), 97);  // 97 % 7 == 6 and the largest such index
}

TEST(Sampler, SameSeedSameDraws) {
  SamplingOptions o;
  o.temperature = 1.0f;
  o.top_k = 0;
  o.top_p = 1.0f;
  o.min_p = 0;
  o.seed = 42;
  Sampler a(o, 100), b(o, 100);
  std::vector<int32_t> da, db;
  for (int i = 0; i < 50; ++i) {
    auto l1 = ramp(100), l2 = ramp(100);
    da.push_back(a.sample(l1, {}));
    db.push_back(b.sample(l2, {}));
  }
  EXPECT_EQ(da, db);
  o.seed = 43;
  Sampler c(o, 100);
  std::vector<int32_t> dc;
  for (int i = 0; i < 50; ++i) {
    auto l = ramp(100);
    dc.push_back(c.sample(l, {}));
  }
  EXPECT_NE(da, dc);
}

TEST(Sampler, TopKOneIsGreedy) {
  SamplingOptions o;
  o.temperature = 5.0f;
  o.top_k = 1;
  Sampler s(o, 100);
  for (int i = 0; i < 20; ++i) {
    auto l = ramp(100);
    EXPECT_EQ(s.sample(l, {}), 97);
  }
}

TEST(Sampler, TopPAndMinPRestrictTheSet) {
  std::vector<float> base = {10.0f, 9.0f, 0.0f, -1.0f, -2.0f};
  SamplingOptions o;
  o.temperature = 1.0f;
  o.top_k = 0;
  o.top_p = 0.5f;  // the first token alone has ~73%
  o.min_p = 0;
  Sampler s(o, 5);
  for (int i = 0; i < 50; ++i) {
    auto l = base;
    EXPECT_EQ(s.sample(l, {}), 0);
  }
  o.top_p = 1.0f;
  o.min_p = 0.2f;  // token 1 has p ratio e^-1 = 0.37 > 0.2, token 2 has e^-10
  Sampler m(o, 5);
  for (int i = 0; i < 200; ++i) {
    auto l = base;
    EXPECT_LE(m.sample(l, {}), 1);
  }
}

TEST(Sampler, RepeatPenaltyDemotesSeenTokens) {
  SamplingOptions o;
  o.temperature = 0;
  o.repeat_penalty = 2.0f;
  Sampler s(o, 3);
  std::vector<float> l = {1.0f, 1.5f, -0.5f};
  std::vector<int32_t> recent = {1, 1};
  EXPECT_EQ(s.sample(l, recent), 0);  // 1.5 / 2 = 0.75 < 1.0
  EXPECT_FLOAT_EQ(l[1], 0.75f);       // penalized once, not per occurrence
}

// top_p over a flat distribution needs far more than the first sorted batch of candidates.
TEST(Sampler, TopPReachesPastTheFirstSortedBatch) {
  SamplingOptions o;
  o.temperature = 1.0f;
  o.top_k = 0;
  o.top_p = 0.5f;
  o.min_p = 0;
  Sampler s(o, 1000);
  int beyond_64 = 0;
  for (int i = 0; i < 300; ++i) {
    std::vector<float> l(1000, 0.0f);  // equal: ties go to the lower id, so the set is ids < 500
    const int32_t id = s.sample(l, {});
    EXPECT_LT(id, 500);
    beyond_64 += id >= 64;
  }
  EXPECT_GT(beyond_64, 200);
}

TEST(Sampler, PresenceAndFrequencyPenalties) {
  SamplingOptions o;
  o.temperature = 0;
  o.presence_penalty = 0.5f;
  o.frequency_penalty = 0.25f;
  Sampler s(o, 3);
  std::vector<float> l = {1.0f, 1.6f, 0.0f};
  std::vector<int32_t> generated = {1, 1, 2};
  EXPECT_EQ(s.sample(l, {}, generated), 0);  // 1.6 - 2 * 0.25 - 0.5 = 0.6 < 1.0
  EXPECT_FLOAT_EQ(l[1], 0.6f);
  EXPECT_FLOAT_EQ(l[2], -0.75f);
}
