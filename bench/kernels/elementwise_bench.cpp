// The fused element-wise kernels at SmolLM2-135M's sizes (d_model 576, d_ff 1536,
// head_dim 64, 9 query / 3 KV heads), one token: scalar reference vs the active table.
#include <benchmark/benchmark.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/ops.hpp"

using namespace minnow::kernels;

namespace {

constexpr int64_t kDModel = 576, kDFF = 1536, kHeadDim = 64, kHeads = 9, kKvHeads = 3;

const KernelTable& table(bool fast) { return fast ? active() : ref_kernels(); }

std::vector<float> random_floats(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = d(rng);
  return v;
}

void BM_RmsNorm(benchmark::State& state, bool fast) {
  const KernelTable& kt = table(fast);
  const int64_t d = state.range(0), rows = state.range(1);
  auto x = random_floats(d * rows, 1), w = random_floats(d, 2);
  std::vector<float> y(x.size());
  for (auto _ : state) {
    kt.rmsnorm(x.data(), w.data(), y.data(), rows, d, 1e-5f);
    benchmark::DoNotOptimize(y.data());
  }
  state.SetItemsProcessed(state.iterations() * d * rows);
  state.SetLabel(kt.name);
}
// The block norms (576) and QK-norm's rows of a head (64 x 9 heads).
BENCHMARK_CAPTURE(BM_RmsNorm, scalar, false)->Args({kDModel, 1})->Args({kHeadDim, kHeads});
BENCHMARK_CAPTURE(BM_RmsNorm, active, true)->Args({kDModel, 1})->Args({kHeadDim, kHeads});

void angles(std::vector<float>& cos, std::vector<float>& sin) {
  for (int64_t i = 0; i < kHeadDim / 2; ++i) {
    const float a = 100.0f * std::pow(10000.0f, -2.0f * static_cast<float>(i) / kHeadDim);
    cos.push_back(std::cos(a));
    sin.push_back(std::sin(a));
  }
}

// The query heads of one token, in place.
void BM_Rope(benchmark::State& state, bool fast) {
  const KernelTable& kt = table(fast);
  const bool half_split = state.range(0) != 0;
  std::vector<float> cos, sin;
  angles(cos, sin);
  auto q = random_floats(kHeads * kHeadDim, 3);
  for (auto _ : state) {
    kt.rope(q.data(), kHeads, kHeadDim, cos.data(), sin.data(), half_split);
    benchmark::DoNotOptimize(q.data());
  }
  state.SetItemsProcessed(state.iterations() * kHeads * kHeadDim);
  state.SetLabel(half_split ? "half-split" : "adjacent pairs");
}
BENCHMARK_CAPTURE(BM_Rope, scalar, false)->Arg(0)->Arg(1);
BENCHMARK_CAPTURE(BM_Rope, active, true)->Arg(0)->Arg(1);

// One token's K (rotated) and V into an f16 cache row: the fused kernel, and the two
// steps it replaces (rope in place, then f32_to_f16 of K and of V).
void BM_RopeStoreKvF16(benchmark::State& state, bool fast, bool fused) {
  const KernelTable& kt = table(fast);
  const bool half_split = state.range(0) != 0;
  std::vector<float> cos, sin;
  angles(cos, sin);
  constexpr int64_t n = kKvHeads * kHeadDim;
  auto k = random_floats(n, 4), v = random_floats(n, 5);
  std::vector<uint16_t> k_out(n), v_out(n);
  for (auto _ : state) {
    if (fused) {
      kt.rope_store_kv_f16(k.data(), v.data(), kKvHeads, kHeadDim, cos.data(), sin.data(), half_split, k_out.data(),
                           v_out.data());
    } else {
      kt.rope(k.data(), kKvHeads, kHeadDim, cos.data(), sin.data(), half_split);
      kt.f32_to_f16(k.data(), k_out.data(), n);
      kt.f32_to_f16(v.data(), v_out.data(), n);
    }
    benchmark::DoNotOptimize(k_out.data());
    benchmark::DoNotOptimize(v_out.data());
  }
  state.SetItemsProcessed(state.iterations() * 2 * n);
}
BENCHMARK_CAPTURE(BM_RopeStoreKvF16, scalar_fused, false, true)->Arg(0)->Arg(1);
BENCHMARK_CAPTURE(BM_RopeStoreKvF16, active_fused, true, true)->Arg(0)->Arg(1);
BENCHMARK_CAPTURE(BM_RopeStoreKvF16, active_rope_then_convert, true, false)->Arg(0)->Arg(1);

// One token's d_ff gate/up pair.
void BM_Glu(benchmark::State& state, bool fast, bool gelu) {
  const KernelTable& kt = table(fast);
  auto g = random_floats(kDFF, 6), u = random_floats(kDFF, 7);
  std::vector<float> out(kDFF);
  for (auto _ : state) {
    (gelu ? kt.glu_gelu_tanh : kt.glu_silu)(g.data(), u.data(), out.data(), kDFF);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * kDFF);
}
BENCHMARK_CAPTURE(BM_Glu, silu_scalar, false, false);
BENCHMARK_CAPTURE(BM_Glu, silu_active, true, false);
BENCHMARK_CAPTURE(BM_Glu, gelu_tanh_scalar, false, true);
BENCHMARK_CAPTURE(BM_Glu, gelu_tanh_active, true, true);

}  // namespace
