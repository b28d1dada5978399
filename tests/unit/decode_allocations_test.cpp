// The decode loop must not touch the heap: every buffer it needs is sized when the session
// starts. Counted by replacing the global operator new for this test binary (not under
// AddressSanitizer, which owns the allocator there).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <new>

#include "minnow/llm.hpp"

#if defined(__SANITIZE_ADDRESS__)
#define MINNOW_COUNT_ALLOCATIONS 0
#else
#define MINNOW_COUNT_ALLOCATIONS 1
#endif

namespace {
std::atomic<long> g_allocations{0};
std::atomic<bool> g_counting{false};
}  // namespace

#if MINNOW_COUNT_ALLOCATIONS
void* operator new(std::size_t n) {
  if (g_counting.load(std::memory_order_relaxed)) g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#endif

namespace {

// Allocations between the first streamed token and the end of generate(): the decode
// steps (sampling, streaming text, forward passes), not the prompt's prefill.
long decode_allocations(minnow::Session& s, const std::vector<int32_t>& prompt, int max_tokens,
                        const minnow::SamplingOptions& sampling) {
  s.reset();
  minnow::GenerateOptions o;
  o.max_tokens = max_tokens;
  o.sampling = sampling;
  o.stop_at_end_of_generation = false;
  g_allocations = 0;
  s.generate(prompt, o, [](std::string_view, int32_t) {
    g_counting = true;
    return true;
  });
  g_counting = false;
  return g_allocations.load();
}

void expect_no_decode_allocations(const std::string& path) {
  if (!MINNOW_COUNT_ALLOCATIONS) GTEST_SKIP() << "allocation counting is off under AddressSanitizer";
  ASSERT_TRUE(std::filesystem::exists(path)) << path;
  auto model = minnow::Model::load(path);
  minnow::Session s(*model, {.ctx = 256, .threads = 2});
  g_allocations = 0;
  g_counting = true;
  const std::vector<int32_t> prompt = model->tokenize("The quick brown fox");
  g_counting = false;
  EXPECT_GT(g_allocations.load(), 0) << "the counter is not counting (tokenizing allocates)";
  minnow::SamplingOptions greedy;
  greedy.temperature = 0;
  minnow::SamplingOptions sampled;
  sampled.repeat_penalty = 1.1f;
  sampled.seed = 7;
  for (const auto& sampling : {greedy, sampled}) {
    // Warm-up: per-thread scratch grows here. On a tiny model a busy machine can leave the
    // worker thread without a task in one run, so give it several to get one.
    for (int i = 0; i < 4; ++i) decode_allocations(s, prompt, 12, sampling);
    const long n = decode_allocations(s, prompt, 11, sampling);
    EXPECT_EQ(n, 0) << path << ": " << n << " allocations in 10 decode steps (temperature " << sampling.temperature << ")";
  }
}

const std::string kRoot = MINNOW_SOURCE_DIR;

}  // namespace

TEST(DecodeAllocations, SmolLM2) { expect_no_decode_allocations(kRoot + "/models/SmolLM2-135M-Instruct.Q4_1.gguf"); }
TEST(DecodeAllocations, TinyGemma3) { expect_no_decode_allocations(kRoot + "/tests/reference/tiny/gemma3"); }
TEST(DecodeAllocations, TinyQwen2) { expect_no_decode_allocations(kRoot + "/tests/reference/tiny/qwen2"); }
