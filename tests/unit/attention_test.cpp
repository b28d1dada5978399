// Tiled attention with an online softmax (models/attention.hpp) against a plain reference
// in double precision (all scores, exact softmax, weighted sum) over shapes that cross tile
// boundaries, with grouped queries, sliding windows, soft-capping and the f32, f16 and q8_0
// caches, for the scalar table and the SIMD one; and a query's output is the same bit for
// bit whether it is computed alone or within a block of queries.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/ops.hpp"
#include "models/attention.hpp"
#include "models/config.hpp"
#include "models/kv_cache.hpp"

using namespace minnow;

namespace {

std::vector<const kernels::KernelTable*> tables() {
  std::vector<const kernels::KernelTable*> t{&kernels::ref_kernels()};
  for (const kernels::KernelTable* k : kernels::simd_kernels()) t.push_back(k);
  return t;
}

std::vector<float> random_floats(size_t n, std::mt19937& rng, float sd) {
  std::normal_distribution<float> d(0.0f, sd);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

// A one-layer cache of one KV head filled with random keys and values, and those as stored
// (rounded to f16 or q8_0) read back as floats for the reference.
struct Cache {
  ModelConfig config;
  KvCache kv;
  std::vector<float> k, v;  // n x head_dim, as stored
  static ModelConfig make_config(int hd) {
    ModelConfig c;
    c.n_layers = 1;
    c.n_heads = 1;
    c.n_kv_heads = 1;
    c.head_dim = hd;
    return c;
  }
  Cache(DType type, int hd, int n, std::mt19937& rng) : config(make_config(hd)), kv(config, n, type) {
    for (int p = 0; p < n; ++p) {
      const auto kp = random_floats(static_cast<size_t>(hd), rng, 1.0f);
      const auto vp = random_floats(static_cast<size_t>(hd), rng, 1.0f);
      kv.store_k(0, p, kp.data());
      kv.store_v(0, p, vp.data());
      for (const auto& [src, dst] : {std::pair{kv.k(0, p), &k}, std::pair{kv.v(0, p), &v}}) {
        const size_t at = dst->size();
        dst->resize(at + static_cast<size_t>(hd));
        if (type == DType::F32)
          std::memcpy(dst->data() + at, src, static_cast<size_t>(hd) * sizeof(float));
        else
          dtype_traits(type).dequantize(src, dst->data() + at, hd / dtype_traits(type).block_size);
      }
    }
  }
  AttnKv view() const {
    return {kv.type(), static_cast<const uint8_t*>(kv.k(0, 0)), static_cast<const uint8_t*>(kv.v(0, 0)),
            static_cast<int64_t>(kv.row_bytes())};
  }
};

// softmax(scale * q . K) V over the positions a query at `pos` sees, in double.
std::vector<double> reference(const Cache& c, const AttnParams& p, const float* q, int pos) {
  const int hd = p.head_dim, begin = p.window > 0 ? std::max(0, pos + 1 - p.window) : 0;
  std::vector<double> x;
  double mx = -INFINITY;
  for (int j = begin; j <= pos; ++j) {
    double s = 0;
    for (int i = 0; i < hd; ++i) s += static_cast<double>(q[i]) * c.k[static_cast<size_t>(j * hd + i)];
    s *= p.scale;
    if (p.softcap > 0) s = p.softcap * std::tanh(s / p.softcap);
    x.push_back(s);
    mx = std::max(mx, s);
  }
  double sum = 0;
  for (double& e : x) sum += (e = std::exp(e - mx));
  std::vector<double> out(static_cast<size_t>(hd), 0.0);
  for (int j = begin; j <= pos; ++j)
    for (int i = 0; i < hd; ++i)
      out[static_cast<size_t>(i)] += x[static_cast<size_t>(j - begin)] / sum * c.v[static_cast<size_t>(j * hd + i)];
  return out;
}

struct Variant {
  const char* name;
  int window;
  float softcap;
};

}  // namespace

// Blocks of up to 6 rows (the last at position n - 1) of `group` heads each, every query
// against the reference.
TEST(Attention, TiledOnlineSoftmaxMatchesReference) {
  std::mt19937 rng(7);
  const Variant variants[] = {{"causal", 0, 0.0f}, {"window 100", 100, 0.0f}, {"soft-cap 2", 0, 2.0f},
                              {"window 40 + soft-cap 5", 40, 5.0f}};
  for (DType type : {DType::F32, DType::F16, DType::Q8_0})
    for (int hd : {32, 64, 128})
      for (int n : {1, 7, 63, 64, 65, 127, 128, 129, 200, 1000}) {
        const Cache cache(type, hd, n, rng);
        for (int group : {1, 2, 3, 4, 5, 8})
          for (const Variant& var : variants) {
            const int rows = std::min({n, 6, kAttnBlockQueries / group});
            const AttnParams p{hd, 1.0f / std::sqrt(static_cast<float>(hd)), var.softcap, var.window};
            // Queries three times as large as the keys: peaked softmaxes whose max moves.
            const auto q = random_floats(static_cast<size_t>(rows * group * hd), rng, 3.0f);
            // The reference once for every table (emulated aarch64 runs have four).
            std::vector<std::vector<double>> wants;
            for (int r = 0; r < rows; ++r)
              for (int h = 0; h < group; ++h)
                wants.push_back(reference(cache, p, &q[static_cast<size_t>((r * group + h) * hd)], n - rows + r));
            for (const kernels::KernelTable* kt : tables()) {
              std::vector<float> out(q.size()), scratch(attn_scratch_floats(hd));
              const AttnQueries qs{q.data(), out.data(), int64_t{group} * hd, rows, group, n - rows};
              attend(*kt, cache.view(), p, qs, scratch.data());
              for (int r = 0; r < rows; ++r)
                for (int h = 0; h < group; ++h) {
                  const size_t at = static_cast<size_t>((r * group + h) * hd);
                  const auto& want = wants[static_cast<size_t>(r * group + h)];
                  for (int i = 0; i < hd; ++i)
                    ASSERT_NEAR(out[at + static_cast<size_t>(i)], want[static_cast<size_t>(i)], 2e-5)
                        << kt->name << " " << dtype_name(type) << " hd=" << hd << " n=" << n << " group=" << group
                        << " " << var.name << " row " << r << " head " << h << " value " << i;
                }
            }
          }
      }
}

// Alone (one row, one head), one row with all its heads, or in a block of rows that
// straddles tile boundaries and is split differently: the same bits.
TEST(Attention, QueryOutputDoesNotDependOnItsBlock) {
  std::mt19937 rng(11);
  const int hd = 64, group = 3, n = 3 * kAttnTile + 20;
  for (DType type : {DType::F32, DType::F16, DType::Q8_0}) {
    const Cache cache(type, hd, n, rng);
    for (int window : {0, 50, kAttnTile + 9})
      for (float cap : {0.0f, 4.0f})
        for (const kernels::KernelTable* kt : tables()) {
          const AttnParams p{hd, 0.125f, cap, window};
          const int rows = kAttnBlockQueries / group, pos0 = 2 * kAttnTile - 4;  // rows cross a tile boundary
          const auto q = random_floats(static_cast<size_t>(rows * group * hd), rng, 3.0f);
          std::vector<float> block(q.size()), scratch(attn_scratch_floats(hd));
          const int64_t stride = int64_t{group} * hd;
          attend(*kt, cache.view(), p, {q.data(), block.data(), stride, rows, group, pos0}, scratch.data());
          for (int r = 0; r < rows; ++r) {
            const size_t row_at = static_cast<size_t>(r * group * hd);
            std::vector<float> row(static_cast<size_t>(group * hd));
            attend(*kt, cache.view(), p, {&q[row_at], row.data(), stride, 1, group, pos0 + r}, scratch.data());
            for (int h = 0; h < group; ++h) {
              std::vector<float> one(static_cast<size_t>(hd));
              const size_t at = row_at + static_cast<size_t>(h * hd);
              attend(*kt, cache.view(), p, {&q[at], one.data(), hd, 1, 1, pos0 + r}, scratch.data());
              const std::string where = std::string(kt->name) + " " + dtype_name(type) + " window " +
                                        std::to_string(window) + " cap " + std::to_string(cap) + " row " +
                                        std::to_string(r) + " head " + std::to_string(h);
              ASSERT_EQ(0, std::memcmp(one.data(), &block[at], one.size() * sizeof(float))) << where << " (block)";
              ASSERT_EQ(0, std::memcmp(one.data(), &row[static_cast<size_t>(h * hd)], one.size() * sizeof(float)))
                  << where << " (row)";
            }
          }
          // The block's last rows as a block of their own.
          const int tail = rows / 2;
          std::vector<float> part(static_cast<size_t>(tail * group * hd));
          const size_t skip = static_cast<size_t>((rows - tail) * group * hd);
          const AttnQueries tail_rows{&q[skip], part.data(), stride, tail, group, pos0 + rows - tail};
          attend(*kt, cache.view(), p, tail_rows, scratch.data());
          ASSERT_EQ(0, std::memcmp(part.data(), &block[skip], part.size() * sizeof(float))) << kt->name;
        }
  }
}

// The tile step alone: chained over tiles it gives the softmax of the whole row (weights
// rescaled by the factors it returns), SIMD and scalar alike.
TEST(Attention, SoftmaxTileStepChainsToFullSoftmax) {
  std::mt19937 rng(3);
  for (int n : {1, 5, 8, 9, 64, 100, 300})
    for (int tile : {1, 7, 8, 64})
      for (float cap : {0.0f, 3.0f})
        for (const kernels::KernelTable* kt : tables()) {
          const auto raw = random_floats(static_cast<size_t>(n), rng, 4.0f);
          const float scale = 0.7f;
          std::vector<double> want(raw.size());
          double mx = -INFINITY, sum = 0;
          for (size_t i = 0; i < raw.size(); ++i) {
            double x = static_cast<double>(raw[i]) * scale;
            if (cap > 0) x = cap * std::tanh(x / cap);
            mx = std::max(mx, want[i] = x);
          }
          for (double& w : want) sum += (w = std::exp(w - mx));
          std::vector<float> s = raw;
          float m = -INFINITY, l = 0;
          for (int t0 = 0; t0 < n; t0 += tile) {
            const int len = std::min(tile, n - t0);
            const float factor = kt->attn_softmax_tile(&s[static_cast<size_t>(t0)], len, scale, cap, &m, &l);
            for (int i = 0; i < t0; ++i) s[static_cast<size_t>(i)] *= factor;
          }
          EXPECT_NEAR(m, mx, 1e-5 * std::fabs(mx) + 1e-6) << kt->name;
          for (int i = 0; i < n; ++i)
            ASSERT_NEAR(s[static_cast<size_t>(i)] / l, want[static_cast<size_t>(i)] / sum, 1e-6)
                << kt->name << " n=" << n << " tile=" << tile << " cap=" << cap << " i=" << i;
        }
}
