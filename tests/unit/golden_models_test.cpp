// minnow against transformers on real models (golden data made by
// tests/reference/make_golden_{smollm2,gemma3}.py): prompt token ids, top-1 agreement of
// the logits at every position, and the 64-token greedy continuation.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "minnow/llm.hpp"
#include "vulkan_device.hpp"

namespace {

const std::string kDir = MINNOW_SOURCE_DIR;

struct RealModel {
  const char* name;  // golden/<name>/
  const char* file;  // models/<file>
  // Free-running greedy decoding, or the same check by teacher forcing: every golden
  // greedy token must be the argmax after the ones before it (identical outcome; one
  // prefill pass, for models whose decode kernels are still slow).
  bool free_running;
  // How much of each 64-token greedy continuation is compared (all by default).
  size_t greedy_tokens = SIZE_MAX;
};

nlohmann::json load_golden(const RealModel& m, const std::string& prompt) {
  std::ifstream in(kDir + "/tests/reference/golden/" + m.name + "/" + prompt + ".json");
  return nlohmann::json::parse(in);
}

int32_t argmax(std::span<const float> v) {
  return static_cast<int32_t>(std::max_element(v.begin(), v.end()) - v.begin());
}

// How many of the golden greedy tokens minnow reproduces before the first difference.
size_t greedy_agreement(minnow::Session& s, const RealModel& m, const std::vector<int32_t>& ids,
                        const std::vector<int32_t>& want) {
  std::vector<int32_t> got;
  if (m.free_running) {
    minnow::GenerateOptions o;
    o.max_tokens = static_cast<int>(want.size());
    o.sampling.temperature = 0;
    o.stop_at_end_of_generation = false;
    s.reset();
    s.generate(ids, o, [&](std::string_view, int32_t id) {
      got.push_back(id);
      return true;
    });
  } else {
    std::vector<int32_t> seq = ids;
    seq.insert(seq.end(), want.begin(), want.end() - 1);
    s.reset();
    s.eval_all(seq, [&](int pos, std::span<const float> logits) {
      if (pos + 1 >= static_cast<int>(ids.size())) got.push_back(argmax(logits));
    });
  }
  size_t same = 0;
  while (same < got.size() && same < want.size() && got[same] == want[same]) ++same;
  return same;
}

// MINNOW_GOLDEN_PROMPTS=english,chat runs only those prompts (emulated runs: the aarch64
// suite under slower CPU models, scripts/test-aarch64); the floors scale with the count.
bool selected(const char* prompt) {
  const char* env = std::getenv("MINNOW_GOLDEN_PROMPTS");
  if (!env || !*env) return true;
  const std::string list = std::string(",") + env + ",";
  return list.find(std::string(",") + prompt + ",") != std::string::npos;
}

void check_model(const RealModel& m, const std::vector<const char*>& prompts, int greedy_floor,
                 minnow::SessionOptions::KvType kv = minnow::SessionOptions::KvType::F16, double top1_floor = 0.99,
                 minnow::SessionOptions::Backend backend = minnow::SessionOptions::Backend::Cpu) {
  const std::string path = kDir + "/models/" + m.file;
  ASSERT_TRUE(std::filesystem::exists(path)) << path << " is missing: run scripts/fetch-models --gemma3 (make test does)";
  auto model = minnow::Model::load(path);
  int positions = 0, agree = 0, greedy_same = 0;
  double max_top1_diff = 0;
  for (const char* name : prompts) {
    if (!selected(name)) continue;
    auto g = load_golden(m, name);
    auto ids = g["ids"].get<std::vector<int32_t>>();
    // (A chat prompt already holds its BOS text: the reference encoded it without adding
    // another, and Model::tokenize does not add a second one.)
    EXPECT_EQ(model->tokenize(g["prompt"].get<std::string>()), ids) << m.name << " " << name << ": prompt ids differ";
    const auto& top = g["top_logits"];
    minnow::Session s(*model, {.ctx = 1024, .threads = 2, .kv_type = kv, .backend = backend});
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
    auto want = g["greedy"].get<std::vector<int32_t>>();
    if (want.size() > m.greedy_tokens) want.resize(m.greedy_tokens);
    const size_t same = greedy_agreement(s, m, ids, want);
    greedy_same += same == want.size();
    std::printf("[golden] %s %-8s top-1 %d/%d, greedy %s (first difference at %zu)\n", m.name, name, agree_here, here,
                same == want.size() ? "identical" : "differs", same);
  }
  std::printf("[golden] %s%s: top-1 agreement %d/%d = %.2f%%, greedy identical %d/%zu, max |top-1 logit diff| %.4f\n", m.name,
              backend == minnow::SessionOptions::Backend::Vulkan ? " (vulkan)" : "", agree, positions, 100.0 * agree / positions, greedy_same, prompts.size(), max_top1_diff);
  size_t n_run = 0;
  for (const char* name : prompts) n_run += selected(name);
  ASSERT_GT(n_run, 0u) << "MINNOW_GOLDEN_PROMPTS selects none of this model's prompts";
  EXPECT_GE(agree, positions * top1_floor);
  // Of the prompts run, as many may differ as the floor allows over all of them.
  EXPECT_GE(greedy_same, greedy_floor - static_cast<int>(prompts.size() - n_run));
}

}  // namespace

// Issue floors: 3 of the 4 main prompts (english, code, chinese, long); "chat" is extra.
TEST(GoldenModels, SmolLM2) {
  check_model({"smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf", true}, {"english", "code", "chinese", "long", "chat"}, 4);
}

// --kv-type q8_0 rounds keys and values to 8 bits per 32-value block: logits move by
// ~0.05-0.2 (already at position 0, where attention returns V_0), so near-ties flip and
// greedy continuations part (measured: top-1 97.8%, scalar kernels 97.3%; 0-1 of 5
// identical). Perplexity is unchanged (docs/benchmarks.md); this holds the option to a
// 96% top-1 floor.
TEST(GoldenModels, SmolLM2WithQ8KvCache) {
  check_model({"smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf", true}, {"english", "code", "chinese", "long", "chat"}, 0,
              minnow::SessionOptions::KvType::Q8_0, 0.96);
}

// Qwen2.5-Coder-0.5B-Instruct Q4_K_M (scripts/fetch-models --qwen05; skipped without it):
// the floor is top-1 >= 99% and every greedy continuation identical.
TEST(GoldenModels, Qwen25Coder05B) {
  if (!std::filesystem::exists(kDir + "/models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"))
    GTEST_SKIP() << "scripts/fetch-models --qwen05";
  check_model({"qwen05", "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf", true}, {"english", "code", "chinese", "long", "chat"},
              5);
}

TEST(GoldenModels, Gemma3) {
  check_model({"gemma3", "gemma-3-270m-Q4_K_M.gguf", false}, {"english", "code", "chinese", "long", "chat"}, 4);
}

#if MINNOW_HAVE_VULKAN
// On the Vulkan backend. CI runs it on lavapipe, a Vulkan device emulated on the CPU where
// SmolLM2 decodes at ~0.5 token/s (2 cores), so two short prompts of SmolLM2 (free-running)
// and one of Gemma 3 (teacher forcing; the tiny models cover its features against
// transformers too), each compared over the first 16 tokens of its greedy continuation.
// On a real GPU: MINNOW_GOLDEN_ALL_PROMPTS=1 runs all five prompts and all 64 tokens.
bool all_prompts() {
  const char* all = std::getenv("MINNOW_GOLDEN_ALL_PROMPTS");
  return all != nullptr && std::string(all) == "1";
}

std::vector<const char*> vulkan_prompts(std::vector<const char*> ci) {
  if (all_prompts()) return {"english", "code", "chinese", "long", "chat"};
  return ci;
}

size_t vulkan_greedy_tokens() { return all_prompts() ? SIZE_MAX : 16; }

TEST(GoldenModels, SmolLM2Vulkan) {
  MINNOW_NEED_VULKAN_DEVICE();
  const auto prompts = vulkan_prompts({"english", "chat"});
  check_model({"smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf", true, vulkan_greedy_tokens()}, prompts,
              static_cast<int>(prompts.size()) - 1, minnow::SessionOptions::KvType::F16, 0.99,
              minnow::SessionOptions::Backend::Vulkan);
}

TEST(GoldenModels, Gemma3Vulkan) {
  MINNOW_NEED_VULKAN_DEVICE();
  const auto prompts = vulkan_prompts({"chat"});
  check_model({"gemma3", "gemma-3-270m-Q4_K_M.gguf", false, vulkan_greedy_tokens()}, prompts,
              static_cast<int>(prompts.size()) - (prompts.size() > 1), minnow::SessionOptions::KvType::F16, 0.99,
              minnow::SessionOptions::Backend::Vulkan);
}
#endif
