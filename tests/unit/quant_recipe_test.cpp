// Type plans (quant/recipe): targets, the Q4_K_M table, --pure, overrides, fallbacks.
#include <gtest/gtest.h>

#include <tuple>

#include "base/error.hpp"
#include "quant/recipe.hpp"

using namespace minnow;
using namespace minnow::quant;

namespace {

Plan plan(const char* target, bool pure = false) { return Plan{*parse_target(target), pure, {}}; }
TensorFacts matrix(std::string name, int64_t row = 1024) { return {std::move(name), {row, 512}, 32, false}; }

}  // namespace

TEST(QuantRecipe, ParsesTargetsCaseInsensitively) {
  EXPECT_EQ(parse_target("q4_k_m")->base, DType::Q4_K);
  EXPECT_TRUE(parse_target("Q4_K_M")->mixed);
  EXPECT_EQ(parse_target("f16")->base, DType::F16);
  EXPECT_FALSE(parse_target("Q4_K")->mixed);
  EXPECT_FALSE(parse_target("Q3_K").has_value());
  EXPECT_EQ(file_type_of(*parse_target("Q4_K_M")), 15u);
  EXPECT_EQ(file_type_of(*parse_target("Q8_0")), 7u);
}

TEST(QuantRecipe, Q4KMGivesMoreBitsToHeadAndSpreadLayers) {
  const Plan p = plan("Q4_K_M");
  EXPECT_EQ(p.choose(matrix("output.weight")).type, DType::Q6_K);
  EXPECT_EQ(p.choose(matrix("token_embd.weight")).type, DType::Q4_K);  // untied
  TensorFacts tied = matrix("token_embd.weight");
  tied.tied_output = true;
  EXPECT_EQ(p.choose(tied).type, DType::Q6_K);
  // 32 layers: the first and last 4, and every third from layer 4 on (6, 9, ...).
  for (int i : {0, 3, 6, 9, 28, 31}) EXPECT_EQ(p.choose(matrix("blk." + std::to_string(i) + ".attn_v.weight")).type, DType::Q6_K) << i;
  for (int i : {4, 5, 7, 26}) EXPECT_EQ(p.choose(matrix("blk." + std::to_string(i) + ".ffn_down.weight")).type, DType::Q4_K) << i;
  EXPECT_EQ(p.choose(matrix("blk.0.attn_q.weight")).type, DType::Q4_K);
  EXPECT_EQ(p.choose({"blk.0.attn_norm.weight", {1024}, 32, false}).type, DType::F32);
}

// The last eighth as llama.cpp counts it, 7 * n / 8 in integers: from layer 24 of 28
// (Qwen2.5-1.5B) and 31 of 36, where n - n / 8 would say 25 and 32.
TEST(QuantRecipe, LastEighthRoundsAsLlamaCpp) {
  const Plan p = plan("Q4_K_M");
  for (auto [n, layer, want] : {std::tuple{28, 24, DType::Q6_K}, {28, 23, DType::Q6_K}, {28, 22, DType::Q4_K},
                                {36, 31, DType::Q6_K}, {36, 29, DType::Q4_K}, {24, 21, DType::Q6_K}, {24, 20, DType::Q6_K},
                                {24, 19, DType::Q4_K}})
    EXPECT_EQ(p.choose({"blk." + std::to_string(layer) + ".attn_v.weight", {1024, 256}, n, false}).type, want)
        << layer << " of " << n;
}

// minnow's Q4_K_KV: K and V up in every layer, ffn_down up only in the two end eighths.
TEST(QuantRecipe, Q4KKVGivesKAndVMoreBitsEverywhere) {
  const Plan p = plan("q4_k_kv");
  EXPECT_EQ(p.choose(matrix("output.weight")).type, DType::Q6_K);
  for (int i : {0, 5, 13, 27}) {
    const std::string blk = "blk." + std::to_string(i) + ".";
    EXPECT_EQ(p.choose({blk + "attn_k.weight", {1536, 256}, 28, false}).type, DType::Q5_K) << i;
    EXPECT_EQ(p.choose({blk + "attn_v.weight", {1536, 256}, 28, false}).type, DType::Q6_K) << i;
    EXPECT_EQ(p.choose({blk + "attn_q.weight", {1536, 1536}, 28, false}).type, DType::Q4_K) << i;
  }
  // 28 layers: down gets Q6_K in 0..2 and 24..27, not in Q4_K_M's every-third layers (5, 8, ... 23).
  for (auto [layer, want] : {std::pair{0, DType::Q6_K}, {2, DType::Q6_K}, {3, DType::Q4_K}, {5, DType::Q4_K},
                             {23, DType::Q4_K}, {24, DType::Q6_K}, {27, DType::Q6_K}})
    EXPECT_EQ(p.choose({"blk." + std::to_string(layer) + ".ffn_down.weight", {8960, 1536}, 28, false}).type, want) << layer;
  EXPECT_EQ(plan("Q4_K_M").choose({"blk.5.ffn_down.weight", {8960, 1536}, 28, false}).type, DType::Q6_K);
}

TEST(QuantRecipe, PureAndPlainTypes) {
  EXPECT_EQ(plan("Q4_0").choose(matrix("output.weight")).type, DType::Q6_K);
  EXPECT_EQ(plan("Q4_0", true).choose(matrix("output.weight")).type, DType::Q4_0);
  EXPECT_EQ(plan("Q8_0").choose(matrix("output.weight")).type, DType::Q8_0);  // already above Q6_K
  EXPECT_EQ(plan("Q4_K_M", true).choose(matrix("blk.0.attn_v.weight")).type, DType::Q4_K);
}

TEST(QuantRecipe, FallbacksSayWhy) {
  const Choice c = plan("Q4_K", true).choose(matrix("blk.0.attn_q.weight", 576));
  EXPECT_EQ(c.type, DType::Q5_0);
  EXPECT_NE(c.fallback.find("rows of 576"), std::string::npos) << c.fallback;
  EXPECT_EQ(fallback_type(DType::Q6_K, 576), DType::Q8_0);
  EXPECT_EQ(fallback_type(DType::Q5_K, 576), DType::Q5_1);
  EXPECT_EQ(fallback_type(DType::Q4_0, 48), DType::F16);
  EXPECT_EQ(fallback_type(DType::Q4_K, 48), DType::F16);
  EXPECT_EQ(fallback_type(DType::F32, 7), DType::F32);
}

TEST(QuantRecipe, OverridesWinAndTheLastMatchCounts) {
  Plan p = plan("Q4_K");
  p.overrides.push_back(parse_override("blk.*.attn_v.weight=Q8_0"));
  p.overrides.push_back(parse_override("/blk\\.1\\./=f16"));
  EXPECT_EQ(p.choose(matrix("blk.0.attn_v.weight")).type, DType::Q8_0);
  EXPECT_EQ(p.choose(matrix("blk.1.attn_v.weight")).type, DType::F16);
  EXPECT_EQ(p.choose(matrix("blk.10.attn_v.weight")).type, DType::Q8_0);
  EXPECT_EQ(p.choose(matrix("blk.0.attn_q.weight")).type, DType::Q4_K);
  // A pattern that also names biases quantizes only the matrices; a float type applies to both.
  p.overrides.push_back(parse_override("/attn_k/=Q5_K"));
  EXPECT_EQ(p.choose(matrix("blk.3.attn_k.weight")).type, DType::Q5_K);
  TensorFacts bias = matrix("blk.3.attn_k.bias");
  bias.dims = {256};
  const Choice kept = p.choose(bias);
  EXPECT_EQ(kept.type, DType::F32);
  EXPECT_NE(kept.reason.find("applies to matrices"), std::string::npos) << kept.reason;
  p.overrides.push_back(parse_override("/attn_k.bias/=F16"));
  EXPECT_EQ(p.choose(bias).type, DType::F16);
  EXPECT_THROW(parse_override("novalue"), Error);
  EXPECT_THROW(parse_override("x=Q4_K_M"), Error);  // a recipe is not a tensor type
  EXPECT_THROW(parse_override("/(/=Q8_0"), Error);
}
