// Every family against transformers on tiny random models (tests/reference/tiny/, made by
// tests/reference/make_tiny_models.py, loaded here as Hugging Face checkpoint directories;
// llama, qwen2 and qwen3 also as GGUF files converted by make_tiny_gguf.py the way llama.cpp's
// converter lays them out, held to the same golden logits):
//  - full-prefill logits at every position within 1e-4 of the logit range;
//  - incremental decoding (one token at a time against the KV cache) gives the logits of
//    the full prefill (within 1e-5 of the range: the kernels sum in a different order);
//  - both with an f32 KV cache; the default f16 cache is held to 1e-3 of the range.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "minnow/llm.hpp"
#include "vulkan_device.hpp"

namespace {

const std::string kRoot = MINNOW_SOURCE_DIR;

struct Golden {
  std::vector<std::vector<int32_t>> sequences;
  int vocab = 0;
  std::vector<float> logits;  // [sequence][position][vocab]
  std::string tokenizer_text;  // encoded by `tokenizers` with add_special_tokens=True
  std::vector<int32_t> tokenizer_ids;
  const float* at(size_t seq, size_t pos) const {
    size_t len = sequences[0].size();
    return &logits[(seq * len + pos) * static_cast<size_t>(vocab)];
  }
};

Golden load_golden(const std::string& family) {
  const std::string base = kRoot + "/tests/reference/golden/tiny/" + family;
  std::ifstream in(base + ".json");
  if (!in) throw std::runtime_error("missing " + base + ".json");
  const auto j = nlohmann::json::parse(in);
  Golden g;
  g.sequences = j.at("sequences").get<std::vector<std::vector<int32_t>>>();
  g.vocab = j.at("vocab_size").get<int>();
  g.tokenizer_text = j.at("tokenizer_check").at("text").get<std::string>();
  g.tokenizer_ids = j.at("tokenizer_check").at("ids").get<std::vector<int32_t>>();
  std::ifstream bin(base + ".logits.f32", std::ios::binary);
  const size_t n = g.sequences.size() * g.sequences.at(0).size() * static_cast<size_t>(g.vocab);
  g.logits.resize(n);
  bin.read(reinterpret_cast<char*>(g.logits.data()), static_cast<std::streamsize>(n * sizeof(float)));
  if (!bin) throw std::runtime_error("short or missing " + base + ".logits.f32");
  return g;
}

struct Diffs {
  double vs_golden = 0;    // prefill logits against transformers'
  double incremental = 0;  // token-by-token decoding against that prefill
};

// Both for sequence s under options o, as max |difference| / the golden logits' range.
Diffs compare_sequence(const minnow::Model& model, const minnow::SessionOptions& o, const Golden& g, size_t s) {
  const auto& ids = g.sequences[s];
  float lo = INFINITY, hi = -INFINITY;
  for (size_t p = 0; p < ids.size(); ++p)
    for (int v = 0; v < g.vocab; ++v) lo = std::min(lo, g.at(s, p)[v]), hi = std::max(hi, g.at(s, p)[v]);
  const double range = hi - lo;
  Diffs d;
  std::vector<std::vector<float>> prefill(ids.size());
  minnow::Session full(model, o);
  full.eval_all(ids, [&](int pos, std::span<const float> logits) {
    prefill[static_cast<size_t>(pos)].assign(logits.begin(), logits.end());
    for (int v = 0; v < g.vocab; ++v)
      d.vs_golden = std::max(d.vs_golden, std::abs(logits[static_cast<size_t>(v)] - g.at(s, static_cast<size_t>(pos))[v]) / range);
  });
  minnow::Session step(model, o);
  for (size_t p = 0; p < ids.size(); ++p) {
    auto logits = step.eval(std::span<const int32_t>(ids.data(), p + 1));
    for (int v = 0; v < g.vocab; ++v)
      d.incremental = std::max(d.incremental, std::abs(logits[static_cast<size_t>(v)] - prefill[p][static_cast<size_t>(v)]) / range);
  }
  return d;
}

// `path` is relative to tests/reference/tiny/: the HF directory "<family>" or "<family>.gguf".
void check_family(const std::string& family, const std::string& path) {
  const Golden g = load_golden(family);
  auto model = minnow::Model::load(kRoot + "/tests/reference/tiny/" + path);
  ASSERT_EQ(model->info().vocab_size, g.vocab);
  EXPECT_EQ(model->tokenize(g.tokenizer_text), g.tokenizer_ids) << path;
  // Exact mode (f32 KV cache) for the parity bounds; the default f16 cache separately.
  const minnow::SessionOptions exact{.ctx = 256, .threads = 2, .kv_type = minnow::SessionOptions::KvType::F32};
  const minnow::SessionOptions half{.ctx = 256, .threads = 2, .kv_type = minnow::SessionOptions::KvType::F16};
  Diffs worst, worst_f16;
  for (size_t s = 0; s < g.sequences.size(); ++s) {
    const Diffs d = compare_sequence(*model, exact, g, s), h = compare_sequence(*model, half, g, s);
    worst.vs_golden = std::max(worst.vs_golden, d.vs_golden);
    worst.incremental = std::max(worst.incremental, d.incremental);
    worst_f16.vs_golden = std::max(worst_f16.vs_golden, h.vs_golden);
  }
  std::printf("[ tiny     ] %-11s max |logit diff| / range: vs transformers %.2e, incremental vs prefill %.2e, "
              "f16 KV cache vs transformers %.2e\n", path.c_str(), worst.vs_golden, worst.incremental, worst_f16.vs_golden);
  EXPECT_LE(worst.vs_golden, 1e-4) << path;
  EXPECT_LE(worst.incremental, 1e-5) << path;
  EXPECT_LE(worst_f16.vs_golden, 1e-3) << path << ": the f16 KV cache moves logits more than its stated tolerance";
}

#if MINNOW_HAVE_VULKAN
// The Vulkan backend (f16 KV cache, as the CPU's default): prefill against transformers at
// the f16 cache's tolerance, and decoding token by token against its own prefill.
void check_family_vulkan(const std::string& family, const std::string& path) {
  const Golden g = load_golden(family);
  auto model = minnow::Model::load(kRoot + "/tests/reference/tiny/" + path);
  // All layers on the device, then the first half on the CPU (partial offload).
  for (const int gpu_layers : {-1, (model->info().n_layers + 1) / 2}) {
    const minnow::SessionOptions vk{.ctx = 256, .threads = 2, .backend = minnow::SessionOptions::Backend::Vulkan,
                                    .gpu_layers = gpu_layers};
    Diffs worst;
    for (size_t s = 0; s < g.sequences.size(); ++s) {
      const Diffs d = compare_sequence(*model, vk, g, s);
      worst.vs_golden = std::max(worst.vs_golden, d.vs_golden);
      worst.incremental = std::max(worst.incremental, d.incremental);
    }
    std::printf("[ tiny vk  ] %-11s %s max |logit diff| / range: vs transformers %.2e, incremental vs prefill %.2e\n",
                path.c_str(), gpu_layers < 0 ? "all layers:" : "half:      ", worst.vs_golden, worst.incremental);
    // Prompts on tensor cores (NV cooperative matrices) multiply halves: inputs rounded to 11
    // bits, against decoding's FP32 matrix-vector products.
    const minnow::vulkan::Device* dev = minnow::test_util::vulkan_device();
    const bool halves = dev != nullptr && dev->info().nv_cooperative_matrix;
    EXPECT_LE(worst.vs_golden, halves ? 2e-3 : 1e-3) << path << ", gpu_layers " << gpu_layers;
    EXPECT_LE(worst.incremental, halves ? 2e-3 : 1e-4) << path << ", gpu_layers " << gpu_layers;
  }
}
#endif

}  // namespace

TEST(TinyModels, Llama) { check_family("llama", "llama"); }
TEST(TinyModels, Qwen2) { check_family("qwen2", "qwen2"); }
TEST(TinyModels, Qwen3) { check_family("qwen3", "qwen3"); }
TEST(TinyModels, Gemma3) { check_family("gemma3", "gemma3"); }
// The same checkpoints as GGUF: Q/K rows permuted and rope_freqs (llama), BF16 (qwen2), F16 (qwen3).
TEST(TinyModels, LlamaGguf) { check_family("llama", "llama.gguf"); }
TEST(TinyModels, Qwen2Gguf) { check_family("qwen2", "qwen2.gguf"); }
TEST(TinyModels, Qwen3Gguf) { check_family("qwen3", "qwen3.gguf"); }

// Q8_0 rows need whole 32-value blocks per head: a head size of 16 is refused by name.
#if MINNOW_HAVE_VULKAN
class TinyModelsVulkan : public ::testing::TestWithParam<const char*> {};
TEST_P(TinyModelsVulkan, MatchesTransformers) {
  MINNOW_NEED_VULKAN_DEVICE();
  const std::string path = GetParam();
  check_family_vulkan(path.substr(0, path.find('.')), path);
}
INSTANTIATE_TEST_SUITE_P(Families, TinyModelsVulkan,
                         ::testing::Values("llama", "qwen2", "qwen3", "gemma3", "llama.gguf", "qwen2.gguf", "qwen3.gguf"),
                         [](const auto& info) {
                           std::string n = info.param;
                           std::replace(n.begin(), n.end(), '.', '_');
                           return n;
                         });
#endif

TEST(TinyModels, Q8KvCacheNeedsHeadDimMultipleOf32) {
  auto model = minnow::Model::load(kRoot + "/tests/reference/tiny/llama.gguf");
  try {
    minnow::Session s(*model, {.ctx = 64, .threads = 1, .kv_type = minnow::SessionOptions::KvType::Q8_0});
    FAIL() << "a q8_0 cache was created for head size 16";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("multiple of 32"), std::string::npos) << e.what();
  }
}
