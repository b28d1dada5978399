// Continuous batching: rows of several sequences in one forward pass give bit-identical
// logits to running each sequence alone (decode rows through the per-row kernels, prompt
// rows through the GEMM, either way independent of the other rows).
#include <gtest/gtest.h>

#include <vector>

#include "base/thread_pool.hpp"
#include "minnow/llm.hpp"
#include "models/kv_cache.hpp"
#include "models/transformer.hpp"

using namespace minnow;

namespace {

const std::string kRoot = MINNOW_SOURCE_DIR;

std::vector<int32_t> tokens(int n, int seed, int vocab) {
  std::vector<int32_t> t(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) t[static_cast<size_t>(i)] = (seed * 7919 + i * 104729) % vocab;
  return t;
}

void check(const std::string& dir) {
  auto model = Model::load(kRoot + "/tests/reference/tiny/" + dir);
  const LoadedModel& m = model->impl();
  const int vocab = m.config.vocab_size, ctx = 64;
  ThreadPool pool(2);
  Transformer net(m, 32, pool);
  const auto a = tokens(20, 1, vocab), b = tokens(13, 2, vocab);

  // Alone: A's prompt then one decode step; B's prompt.
  KvCache kv_a(m.config, ctx, DType::F16), kv_b(m.config, ctx, DType::F16);
  std::vector<float> a_step(static_cast<size_t>(vocab)), b_last(a_step.size());
  net.forward(a.data(), 19, 0, kv_a, a_step.data(), false);
  net.forward(&a[19], 1, 19, kv_a, a_step.data(), false);
  net.forward(b.data(), 13, 0, kv_b, b_last.data(), false);

  // Batched: A's prompt, then A's decode row together with all of B's prompt.
  KvCache kv_a2(m.config, ctx, DType::F16), kv_b2(m.config, ctx, DType::F16);
  std::vector<float> scratch(static_cast<size_t>(vocab));
  net.forward(a.data(), 19, 0, kv_a2, scratch.data(), false);
  std::vector<int32_t> toks{a[19]}, pos{19};
  std::vector<KvCache*> kvs{&kv_a2};
  for (int i = 0; i < 13; ++i) {
    toks.push_back(b[static_cast<size_t>(i)]);
    pos.push_back(i);
    kvs.push_back(&kv_b2);
  }
  const int32_t rows[] = {0, 13};
  std::vector<float> out(2 * static_cast<size_t>(vocab));
  net.forward(Transformer::Batch{toks.data(), pos.data(), kvs.data(), 14, 1, rows, 2}, out.data());
  for (int i = 0; i < vocab; ++i) {
    ASSERT_EQ(out[static_cast<size_t>(i)], a_step[static_cast<size_t>(i)]) << dir << " decode row, logit " << i;
    ASSERT_EQ(out[static_cast<size_t>(vocab + i)], b_last[static_cast<size_t>(i)]) << dir << " prompt row, logit " << i;
  }
}

}  // namespace

TEST(BatchedForward, LlamaMatchesSeparateRuns) { check("llama"); }
TEST(BatchedForward, Gemma3MatchesSeparateRuns) { check("gemma3"); }
TEST(BatchedForward, Qwen3GgufMatchesSeparateRuns) { check("qwen3.gguf"); }
