// minnow against transformers on the real default model (golden data made by
// tests/reference/make_golden_smollm2.py): prompt token ids, top-1 agreement of the
// logits at every position, and the 64-token greedy continuation.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "minnow/llm.hpp"

namespace {

const std::string kDir = MINNOW_SOURCE_DIR;
const std::string kModel = kDir + "/models/SmolLM2-135M-Instruct.Q4_1.gguf";
const char* kPrompts[] = {"english", "code", "chinese", "long", "chat"};

nlohmann::json load_golden(const std::string& name) {
  std::ifstream in(kDir + "/tests/reference/golden/smollm2/" + name + ".json");
  return nlohmann::json::parse(in);
}

class GoldenSmolLM2 : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (std::filesystem::exists(kModel)) model_ = minnow::Model::load(kModel).release();
  }
  static void TearDownTestSuite() { delete model_; }
  void SetUp() override {
    ASSERT_NE(model_, nullptr) << kModel << " is missing: run scripts/fetch-models (make test does)";
  }
  static minnow::Model* model_;
};
minnow::Model* GoldenSmolLM2::model_ = nullptr;

int32_t argmax(std::span<const float> v) {
  return static_cast<int32_t>(std::max_element(v.begin(), v.end()) - v.begin());
}

}  // namespace

TEST_F(GoldenSmolLM2, TokenizerMatchesModelRules) {
  for (const char* name : kPrompts) {
    auto g = load_golden(name);
    EXPECT_EQ(model_->tokenize(g["prompt"].get<std::string>()), g["ids"].get<std::vector<int32_t>>()) << name;
  }
}

TEST_F(GoldenSmolLM2, TopOneAgreementAndGreedyContinuation) {
  int positions = 0, agree = 0, greedy_same = 0;
  double max_top1_diff = 0;
  for (const char* name : kPrompts) {
    auto g = load_golden(name);
    auto ids = g["ids"].get<std::vector<int32_t>>();
    const auto& top = g["top_logits"];
    minnow::Session s(*model_, {.ctx = 1024, .threads = 2});
    int here = 0, agree_here = 0;
    s.eval_all(ids, [&](int pos, std::span<const float> logits) {
      const auto& ref = top[static_cast<size_t>(pos)];
      int32_t want = ref[0][0].get<int32_t>();
      ++here;
      if (argmax(logits) == want) ++agree_here;
      max_top1_diff = std::max(max_top1_diff, std::fabs(logits[static_cast<size_t>(want)] - ref[0][1].get<double>()));
    });
    positions += here;
    agree += agree_here;

    minnow::GenerateOptions o;
    o.max_tokens = 64;
    o.sampling.temperature = 0;
    o.stop_at_end_of_generation = false;
    std::vector<int32_t> out;
    s.reset();
    s.generate(ids, o, [&](std::string_view, int32_t id) {
      out.push_back(id);
      return true;
    });
    auto want = g["greedy"].get<std::vector<int32_t>>();
    size_t first_diff = 0;
    while (first_diff < out.size() && first_diff < want.size() && out[first_diff] == want[first_diff]) ++first_diff;
    bool same = out == want;
    greedy_same += same;
    std::printf("[golden] %-8s top-1 %d/%d, greedy %s (first difference at %zu)\n", name, agree_here, here,
                same ? "identical" : "differs", first_diff);
  }
  std::printf("[golden] top-1 agreement %d/%d = %.2f%%, greedy identical %d/%zu, max |top-1 logit diff| %.4f\n", agree,
              positions, 100.0 * agree / positions, greedy_same, std::size(kPrompts), max_top1_diff);
  EXPECT_GE(agree, positions * 0.99);
  EXPECT_GE(greedy_same, 4);  // issue floor: 3 of the 4 main prompts; the chat prompt is extra
}
