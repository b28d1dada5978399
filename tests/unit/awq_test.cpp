// quantize --awq: the scaled model computes what the source does, the importance follows
// the scaling, the search never picks a scaling its measure finds worse, and groups it
// cannot scale are left alone with a reason.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>

#include "quant/awq.hpp"

namespace minnow::quant {
namespace {

constexpr int64_t kCols = 256, kRows = 256;  // kRows: also the row length of ffn_down

// One pre-norm layer of f32 tensors in memory: norms, Q, K, V, gate, up; an imatrix with
// log-normal column importance (as real activations look) shared by each norm's readers.
struct TinyLayer {
  std::vector<std::shared_ptr<std::vector<float>>> data;
  ModelSource src;
  Imatrix imatrix;

  explicit TinyLayer(uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> g(0.0f, 1.0f);
    src.n_layers = 1;
    const auto add = [&](const std::string& name, std::vector<int64_t> dims, float offset) {
      const int64_t n = dims.size() == 1 ? dims[0] : dims[0] * dims[1];
      auto v = std::make_shared<std::vector<float>>(static_cast<size_t>(n));
      for (float& x : *v) x = offset + (offset ? 0.1f : 1.0f) * g(rng);
      data.push_back(v);
      SourceTensor t{name, dims, "F32", static_cast<uint64_t>(n), static_cast<uint64_t>(4 * n), nullptr, DType::F32, {}};
      const int64_t len = dims[0];
      t.read_row = [v, len](int64_t r, float* out) { std::copy_n(v->data() + r * len, len, out); };
      src.tensors.push_back(std::move(t));
    };
    for (const char* norm : {"attn_norm", "ffn_norm"}) {
      add(std::string("blk.0.") + norm + ".weight", {kCols}, 1.0f);
      std::vector<float> sum2(kCols);
      for (float& x : sum2) x = std::exp(2.0f * g(rng));
      for (const char* m : std::string(norm) == "attn_norm" ? std::vector<const char*>{"attn_q", "attn_k", "attn_v"}
                                                            : std::vector<const char*>{"ffn_gate", "ffn_up"}) {
        add(std::string("blk.0.") + m + ".weight", {kCols, kRows}, 0.0f);
        imatrix.entries[std::string("blk.0.") + m + ".weight"] = {sum2, {1.0f}};
      }
    }
    add("blk.0.ffn_down.weight", {kRows, kCols}, 0.0f);  // reads act(gate) * up: up's rows
    std::vector<float> sum2(kRows);
    for (float& x : sum2) x = std::exp(2.0f * g(rng));
    imatrix.entries["blk.0.ffn_down.weight"] = {sum2, {1.0f}};
  }
  size_t index(const std::string& name) const {
    for (size_t i = 0; i < src.tensors.size(); ++i)
      if (src.tensors[i].name == name) return i;
    return SIZE_MAX;
  }
  std::vector<float> row(const std::string& name, int64_t r) const {
    const SourceTensor& t = src.tensors[index(name)];
    std::vector<float> out(static_cast<size_t>(t.dims[0]));
    t.read_row(r, out.data());
    return out;
  }
};

DType f32_norms_and(DType matrices, const ModelSource& src, size_t i) {
  return src.tensors[i].dims.size() == 1 ? DType::F32 : matrices;
}

TEST(Awq, ScaledLayerComputesTheSameAndImportanceFollows) {
  for (DType type : {DType::Q4_0, DType::Q4_K}) {
    TinyLayer before(7), after(7);
    ThreadPool pool(2);
    const AwqReport r = apply_awq(after.src, after.imatrix, [&](size_t i) { return f32_norms_and(type, after.src, i); }, pool);
    ASSERT_EQ(r.groups.size(), 3u);
    EXPECT_TRUE(r.skipped.empty());
    for (const AwqGroup& g : r.groups) {
      EXPECT_LE(g.error, g.unscaled_error) << g.name;
      // Strongly uneven importance: some scaling pays.
      EXPECT_GT(g.alpha, 0.0f) << dtype_name(type) << " " << g.name;
      EXPECT_LT(g.error, 0.95 * g.unscaled_error) << dtype_name(type) << " " << g.name;
    }
    for (const std::string norm : {"attn_norm", "ffn_norm"}) {
      const auto g0 = before.row("blk.0." + norm + ".weight", 0), g1 = after.row("blk.0." + norm + ".weight", 0);
      const std::string mat = norm == "attn_norm" ? "blk.0.attn_k.weight" : "blk.0.ffn_gate.weight";  // up: below
      EXPECT_EQ(after.src.tensors[after.index(mat)].raw, nullptr);
      const auto a0 = before.imatrix.importance(mat), a1 = after.imatrix.importance(mat);
      for (int64_t r = 0; r < kRows; r += 9) {
        const auto w0 = before.row(mat, r), w1 = after.row(mat, r);
        for (int64_t j = 0; j < kCols; ++j) {
          const float s = w1[j] / w0[j];
          EXPECT_NEAR(w1[j] * g1[j], w0[j] * g0[j], 1e-5f * std::abs(w0[j] * g0[j]) + 1e-7f);  // W' diag(g') = W diag(g)
          EXPECT_NEAR(a1[j] * s * s, a0[j], 1e-4f * a0[j]);                                  // a' = a / s^2
        }
      }
    }
    // down's column j times up's row j is unchanged, and down's importance follows.
    const auto a0 = before.imatrix.importance("blk.0.ffn_down.weight"), a1 = after.imatrix.importance("blk.0.ffn_down.weight");
    for (int64_t j = 0; j < kRows; j += 7) {
      const auto up0 = before.row("blk.0.ffn_up.weight", j), up1 = after.row("blk.0.ffn_up.weight", j);
      const auto up_cols = after.row("blk.0.ffn_norm.weight", 0), up_cols0 = before.row("blk.0.ffn_norm.weight", 0);
      const float s_up = up_cols0[3] / up_cols[3];  // ffn_norm's scale of column 3
      const float s = up0[3] * s_up / up1[3];       // down's scale of column j
      for (int64_t r = 0; r < kCols; r += 11) {
        const float d0 = before.row("blk.0.ffn_down.weight", r)[j], d1 = after.row("blk.0.ffn_down.weight", r)[j];
        EXPECT_NEAR(d1, d0 * s, 1e-4f * std::abs(d0 * s) + 1e-7f);
      }
      EXPECT_NEAR(a1[j] * s * s, a0[j], 1e-3f * a0[j]);
    }
  }
}

TEST(Awq, EvenImportanceLeavesTheModelAlone) {
  TinyLayer layer(3);
  for (auto& [name, e] : layer.imatrix.entries) std::fill(e.sum2.begin(), e.sum2.end(), 2.0f);
  const auto w0 = layer.row("blk.0.attn_q.weight", 5);
  ThreadPool pool(1);
  const AwqReport r = apply_awq(layer.src, layer.imatrix, [&](size_t i) { return f32_norms_and(DType::Q4_K, layer.src, i); }, pool);
  for (const AwqGroup& g : r.groups) EXPECT_EQ(g.alpha, 0.0f) << g.name;  // every s_j is 1: no change
  EXPECT_EQ(layer.row("blk.0.attn_q.weight", 5), w0);
}

TEST(Awq, GroupsItCannotScaleAreLeftAloneWithAReason) {
  TinyLayer layer(4);
  layer.imatrix.entries.erase("blk.0.ffn_up.weight");
  const auto gate = layer.row("blk.0.ffn_gate.weight", 0), attn_norm = layer.row("blk.0.attn_norm.weight", 0);
  ThreadPool pool(1);
  // attn_v kept as F32: its group is left alone too.
  const size_t v = layer.index("blk.0.attn_v.weight");
  const AwqReport r = apply_awq(layer.src, layer.imatrix, [&](size_t i) {
    return i == v ? DType::F32 : f32_norms_and(DType::Q4_0, layer.src, i);
  }, pool);
  ASSERT_EQ(r.groups.size(), 1u);  // down: its own entry is there
  EXPECT_EQ(r.groups[0].name, "blk.0.ffn_down.weight");
  ASSERT_EQ(r.skipped.size(), 2u);
  EXPECT_NE(r.skipped[0].find("blk.0.attn_v.weight is not quantized"), std::string::npos) << r.skipped[0];
  EXPECT_NE(r.skipped[1].find("the imatrix has no entry for blk.0.ffn_up.weight"), std::string::npos) << r.skipped[1];
  EXPECT_EQ(layer.row("blk.0.ffn_gate.weight", 0), gate);
  EXPECT_EQ(layer.row("blk.0.attn_norm.weight", 0), attn_norm);

  // Another model's imatrix: skipped here, refused by quantize_model.
  TinyLayer foreign(5);
  foreign.imatrix.entries["blk.0.attn_q.weight"] = {std::vector<float>(10, 1.0f), {1.0f}};
  const AwqReport f = apply_awq(foreign.src, foreign.imatrix, [&](size_t i) { return f32_norms_and(DType::Q8_0, foreign.src, i); }, pool);
  ASSERT_FALSE(f.skipped.empty());
  EXPECT_NE(f.skipped[0].find("the imatrix entry for blk.0.attn_q.weight has another length"), std::string::npos) << f.skipped[0];
  TinyLayer nan(6);
  nan.imatrix.entries["blk.0.ffn_down.weight"].sum2[3] = std::nanf("");
  const AwqReport r2 = apply_awq(nan.src, nan.imatrix, [&](size_t i) { return f32_norms_and(DType::Q8_0, nan.src, i); }, pool);
  ASSERT_EQ(r2.skipped.size(), 1u);
  EXPECT_NE(r2.skipped[0].find("negative or non-finite"), std::string::npos) << r2.skipped[0];
}

}  // namespace
}  // namespace minnow::quant
