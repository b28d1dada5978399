// Attention micro-benchmarks at SmolLM2-135M's shapes (9 query heads over 3 KV heads,
// head_dim 64): the per-tile kernels, then decode (one row) and a 512-row prefill through
// the tiled online-softmax attention, one thread, scalar table against the active one.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "kernels/ops.hpp"
#include "models/attention.hpp"
#include "models/config.hpp"
#include "models/kv_cache.hpp"

using namespace minnow;
using namespace minnow::kernels;

namespace {

constexpr int kHeads = 9, kKvHeads = 3, kHeadDim = 64, kGroup = kHeads / kKvHeads;

const KernelTable& table(bool scalar) { return scalar ? ref_kernels() : active(); }

std::vector<float> random_floats(size_t n, float sd, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, sd);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

// One layer of cache for n positions of random keys and values.
struct Cache {
  ModelConfig config;
  KvCache kv;
  static ModelConfig make_config() {
    ModelConfig c;
    c.n_layers = 1;
    c.n_heads = kHeads;
    c.n_kv_heads = kKvHeads;
    c.head_dim = kHeadDim;
    return c;
  }
  Cache(DType type, int n) : config(make_config()), kv(config, n, type) {
    const auto rows = random_floats(static_cast<size_t>(n) * kKvHeads * kHeadDim * 2, 1.0f, 5);
    for (int p = 0; p < n; ++p) {
      kv.store_k(0, p, &rows[static_cast<size_t>(2 * p) * kKvHeads * kHeadDim]);
      kv.store_v(0, p, &rows[static_cast<size_t>(2 * p + 1) * kKvHeads * kHeadDim]);
    }
  }
  AttnKv head(int h) const {
    return {kv.type(), static_cast<const uint8_t*>(kv.k(0, 0)) + kv.head_offset(h),
            static_cast<const uint8_t*>(kv.v(0, 0)) + kv.head_offset(h), static_cast<int64_t>(kv.row_bytes())};
  }
};

// One tile: scores then weighted values of the 3 query heads of a KV head.
void BM_AttnTileKernels(benchmark::State& state, DType type, bool scalar) {
  const KernelTable& kt = table(scalar);
  const Cache c(type, kAttnTile);
  const AttnKv kv = c.head(0);
  const auto q = random_floats(kGroup * kHeadDim, 1.0f, 1);
  const auto w = random_floats(kGroup * kAttnTile, 0.1f, 2);
  std::vector<float> s(kGroup * kAttnTile), out(kGroup * kHeadDim);
  for (auto _ : state) {
    if (type == DType::F16) {
      kt.attn_scores_f16(q.data(), kGroup, reinterpret_cast<const uint16_t*>(kv.k), kv.stride / 2, kAttnTile, kHeadDim,
                         s.data(), kAttnTile);
      kt.attn_values_f16(w.data(), kGroup, kAttnTile, reinterpret_cast<const uint16_t*>(kv.v), kv.stride / 2,
                         kAttnTile, kHeadDim, out.data());
    } else {
      kt.attn_scores_q8(q.data(), kGroup, kv.k, kv.stride, kAttnTile, kHeadDim, s.data(), kAttnTile);
      kt.attn_values_q8(w.data(), kGroup, kAttnTile, kv.v, kv.stride, kAttnTile, kHeadDim, out.data());
    }
    benchmark::DoNotOptimize(s.data());
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * kGroup * kAttnTile);  // (query, position) pairs
}

// The online-softmax step over one tile of one query's scores.
void BM_AttnSoftmaxTile(benchmark::State& state, bool scalar) {
  const KernelTable& kt = table(scalar);
  const auto raw = random_floats(kAttnTile, 3.0f, 3);
  std::vector<float> s(raw);
  for (auto _ : state) {
    std::copy(raw.begin(), raw.end(), s.begin());
    float m = -INFINITY, l = 0;
    benchmark::DoNotOptimize(kt.attn_softmax_tile(s.data(), kAttnTile, 0.125f, 0.0f, &m, &l));
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * kAttnTile);
}

// All heads of one row over `positions` cached positions (a decode step of one layer).
void BM_AttnDecode(benchmark::State& state, DType type, bool scalar) {
  const int n = static_cast<int>(state.range(0));
  const KernelTable& kt = table(scalar);
  const Cache c(type, n);
  const auto q = random_floats(kHeads * kHeadDim, 1.0f, 4);
  std::vector<float> out(q.size()), scratch(attn_scratch_floats(kHeadDim));
  const AttnParams p{kHeadDim, 0.125f, 0.0f, 0};
  for (auto _ : state) {
    for (int h = 0; h < kKvHeads; ++h) {
      const size_t at = static_cast<size_t>(h) * kGroup * kHeadDim;
      attend(kt, c.head(h), p, {&q[at], &out[at], kHeads * kHeadDim, 1, kGroup, n - 1}, scratch.data());
    }
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * kHeads * n);
}

// A 512-row prompt of one layer, in the blocks Transformer::attention makes.
void BM_AttnPrefill(benchmark::State& state, DType type, bool scalar) {
  const int n = static_cast<int>(state.range(0)), rows_per_block = kAttnBlockQueries / kGroup;
  const KernelTable& kt = table(scalar);
  const Cache c(type, n);
  const auto q = random_floats(static_cast<size_t>(n) * kHeads * kHeadDim, 1.0f, 6);
  std::vector<float> out(q.size()), scratch(attn_scratch_floats(kHeadDim));
  const AttnParams p{kHeadDim, 0.125f, 0.0f, 0};
  for (auto _ : state) {
    for (int r0 = 0; r0 < n; r0 += rows_per_block)
      for (int h = 0; h < kKvHeads; ++h) {
        const size_t at = (static_cast<size_t>(r0) * kHeads + static_cast<size_t>(h) * kGroup) * kHeadDim;
        attend(kt, c.head(h), p, {&q[at], &out[at], kHeads * kHeadDim, std::min(rows_per_block, n - r0), kGroup, r0},
               scratch.data());
      }
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * kHeads * n * (n + 1) / 2);
}

// The attention this replaced, for comparison: all of a row's scores over the cache into a
// ctx-sized buffer, a two-pass softmax, then the weighted values (f16 cache, 3 heads at once).
void two_pass_attention(const KernelTable& kt, const AttnKv& kv, const float* q, int n, float* s, float* out) {
  kt.attn_scores_f16(q, kGroup, reinterpret_cast<const uint16_t*>(kv.k), kv.stride / 2, n, kHeadDim, s, n);
  for (int g = 0; g < kGroup; ++g) {
    float* sg = s + static_cast<size_t>(g) * n;
    float mx = -INFINITY;
    for (int p = 0; p < n; ++p) mx = std::max(mx, sg[p] *= 0.125f);
    const float inv = 1.0f / kt.exp_sum(sg, n, mx);
    for (int p = 0; p < n; ++p) sg[p] *= inv;
  }
  std::fill(out, out + kGroup * kHeadDim, 0.0f);
  kt.attn_values_f16(s, kGroup, n, reinterpret_cast<const uint16_t*>(kv.v), kv.stride / 2, n, kHeadDim, out);
}

void BM_AttnDecodeTwoPass(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const Cache c(DType::F16, n);
  const auto q = random_floats(kHeads * kHeadDim, 1.0f, 4);
  std::vector<float> out(q.size()), s(static_cast<size_t>(kGroup) * n);
  for (auto _ : state) {
    for (int h = 0; h < kKvHeads; ++h) {
      const size_t at = static_cast<size_t>(h) * kGroup * kHeadDim;
      two_pass_attention(active(), c.head(h), &q[at], n, s.data(), &out[at]);
    }
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * kHeads * n);
}

void BM_AttnPrefillTwoPass(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const Cache c(DType::F16, n);
  const auto q = random_floats(static_cast<size_t>(n) * kHeads * kHeadDim, 1.0f, 6);
  std::vector<float> out(q.size()), s(static_cast<size_t>(kGroup) * n);
  for (auto _ : state) {
    for (int r = 0; r < n; ++r)
      for (int h = 0; h < kKvHeads; ++h) {
        const size_t at = (static_cast<size_t>(r) * kHeads + static_cast<size_t>(h) * kGroup) * kHeadDim;
        two_pass_attention(active(), c.head(h), &q[at], r + 1, s.data(), &out[at]);
      }
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * kHeads * n * (n + 1) / 2);
}

}  // namespace

BENCHMARK_CAPTURE(BM_AttnTileKernels, f16_scalar, DType::F16, true);
BENCHMARK_CAPTURE(BM_AttnTileKernels, f16_active, DType::F16, false);
BENCHMARK_CAPTURE(BM_AttnTileKernels, q8_0_scalar, DType::Q8_0, true);
BENCHMARK_CAPTURE(BM_AttnTileKernels, q8_0_active, DType::Q8_0, false);
BENCHMARK_CAPTURE(BM_AttnSoftmaxTile, scalar, true);
BENCHMARK_CAPTURE(BM_AttnSoftmaxTile, active, false);
#define ATTN_DECODE_BENCH(NAME, TYPE, SCALAR) \
  BENCHMARK_CAPTURE(BM_AttnDecode, NAME, TYPE, SCALAR)->Arg(128)->Arg(512)->Arg(2048)->Unit(benchmark::kMicrosecond)
ATTN_DECODE_BENCH(f16_scalar, DType::F16, true);
ATTN_DECODE_BENCH(f16_active, DType::F16, false);
ATTN_DECODE_BENCH(q8_0_active, DType::Q8_0, false);
ATTN_DECODE_BENCH(f32_active, DType::F32, false);
BENCHMARK(BM_AttnDecodeTwoPass)->Arg(128)->Arg(512)->Arg(2048)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_AttnPrefill, f16_scalar, DType::F16, true)->Arg(512)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_AttnPrefill, f16_active, DType::F16, false)->Arg(512)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_AttnPrefill, q8_0_active, DType::Q8_0, false)->Arg(512)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_AttnPrefillTwoPass)->Arg(512)->Unit(benchmark::kMillisecond);
