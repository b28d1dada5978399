// Importance matrices (quant/imatrix*): the GGUF file round trip, llama.cpp's legacy .dat
// read, the collector's sums and names, matching against a model, and weighted rounding.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "base/error.hpp"
#include "quant/imatrix.hpp"
#include "quant/imatrix_collector.hpp"
#include "quant/imatrix_match.hpp"
#include "quant/quantize.hpp"
#include "tensor/dtype.hpp"

using namespace minnow;
using namespace minnow::quant;

namespace {

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("minnow_imatrix_test_" + name)).string();
}

template <class T>
void put(std::string& s, T v) {
  s.append(reinterpret_cast<const char*>(&v), sizeof v);
}

Imatrix sample() {
  Imatrix m;
  m.entries["blk.0.attn_q.weight"] = {{1, 4, 9, 16}, {2}};
  m.entries["output.weight"] = {{0.5f, 0.25f, 0, 8}, {4}};
  m.datasets = {"calibration.txt"};
  m.chunk_count = 3;
  m.chunk_size = 512;
  return m;
}

}  // namespace

TEST(Imatrix, GgufRoundTrip) {
  const std::string p = temp_path("rt.gguf");
  write_imatrix(sample(), p);
  const Imatrix r = read_imatrix(p);
  std::filesystem::remove(p);
  ASSERT_EQ(r.entries.size(), 2u);
  EXPECT_EQ(r.entries.at("blk.0.attn_q.weight").sum2, (std::vector<float>{1, 4, 9, 16}));
  EXPECT_EQ(r.entries.at("output.weight").counts, (std::vector<float>{4}));
  EXPECT_EQ(r.datasets, (std::vector<std::string>{"calibration.txt"}));
  EXPECT_EQ(r.chunk_count, 3);
  EXPECT_EQ(r.chunk_size, 512);
  EXPECT_EQ(r.importance("blk.0.attn_q.weight"), (std::vector<float>{0.5f, 2, 4.5f, 8}));
  EXPECT_TRUE(r.importance("blk.9.ffn_up.weight").empty());
}

TEST(Imatrix, ReadsLegacyDat) {
  // llama-imatrix's old form: values are mean squares times ncall.
  std::string b;
  put<int32_t>(b, 1);
  const std::string name = "blk.0.ffn_down.weight";
  put<int32_t>(b, static_cast<int32_t>(name.size()));
  b += name;
  put<int32_t>(b, 10);  // ncall
  put<int32_t>(b, 3);   // nval
  for (float v : {10.0f, 20.0f, 5.0f}) put(b, v);
  put<int32_t>(b, 10);  // chunk count
  put<int32_t>(b, 4);
  b += "wiki";
  const std::string p = temp_path("legacy.dat");
  std::ofstream(p, std::ios::binary) << b;
  const Imatrix r = read_imatrix(p);
  EXPECT_EQ(r.importance(name), (std::vector<float>{1, 2, 0.5f}));
  EXPECT_EQ(r.chunk_count, 10);
  EXPECT_EQ(r.datasets, (std::vector<std::string>{"wiki"}));
  // Truncated: refused with the byte where it ran out, never read past the end.
  std::ofstream(p, std::ios::binary) << b.substr(0, 20);
  try {
    read_imatrix(p);
    ADD_FAILURE() << "truncated .dat accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos) << e.what();
  }
  std::filesystem::remove(p);
  EXPECT_THROW(read_imatrix(temp_path("does-not-exist")), Error);
}

TEST(Imatrix, CollectorSumsSquaresPerColumnUnderEveryFedName) {
  LoadedModel m;
  m.config.n_layers = 2;
  const uint8_t a = 0, b = 0;
  m.token_embd.data = &a;
  m.output.data = &b;  // not tied: the head is output.weight
  ImatrixCollector c(m);
  const float x[] = {1, 2, 3, -1, -2, -3};  // 2 rows x 3 columns
  c.observe(1, MatmulSite::AttnQkv, x, 2, 3);
  c.observe(1, MatmulSite::AttnQkv, x, 1, 3);
  c.observe(-1, MatmulSite::Output, x, 2, 3);
  const Imatrix r = c.result();
  ASSERT_EQ(r.entries.size(), 4u);  // q, k, v of layer 1, and the head
  for (const char* n : {"blk.1.attn_q.weight", "blk.1.attn_k.weight", "blk.1.attn_v.weight"}) {
    EXPECT_EQ(r.entries.at(n).sum2, (std::vector<float>{3, 12, 27})) << n;
    EXPECT_EQ(r.entries.at(n).counts, (std::vector<float>{3})) << n;
  }
  EXPECT_EQ(r.entries.at("output.weight").sum2, (std::vector<float>{2, 8, 18}));
  m.output.data = &a;  // tied: the embedding is the head
  EXPECT_EQ(ImatrixCollector(m).result().entries.size(), 0u);
  ImatrixCollector tied(m);
  tied.observe(-1, MatmulSite::Output, x, 1, 3);
  EXPECT_EQ(tied.result().entries.count("token_embd.weight"), 1u);
}

TEST(Imatrix, MatchRefusesForeignNamesAndSizesAndListsMissing) {
  ModelSource src;
  src.tensors.push_back({"blk.0.attn_q.weight", {4, 8}, "F32", 32, 128, nullptr, DType::F32, {}});
  src.tensors.push_back({"blk.0.ffn_up.weight", {4, 8}, "F32", 32, 128, nullptr, DType::F32, {}});
  src.tensors.push_back({"output_norm.weight", {4}, "F32", 4, 16, nullptr, DType::F32, {}});
  const auto matrices = [&](size_t i) { return src.tensors[i].dims.size() == 2; };
  Imatrix m;
  m.entries["blk.0.attn_q.weight"] = {{4, 8, 12, 16}, {4}};
  std::vector<std::string> missing;
  const auto imp = match_imatrix(m, src, matrices, missing);
  EXPECT_EQ(imp[0], (std::vector<float>{1, 2, 3, 4}));
  EXPECT_TRUE(imp[1].empty());
  EXPECT_EQ(missing, (std::vector<std::string>{"blk.0.ffn_up.weight"}));

  Imatrix wrong_size = m;
  wrong_size.entries["blk.0.attn_q.weight"] = {{1, 2, 3}, {1}};
  EXPECT_THROW(match_imatrix(wrong_size, src, matrices, missing), Error);
  Imatrix foreign = m;
  foreign.entries["blk.40.attn_q.weight"] = {{1, 2, 3, 4}, {1}};
  EXPECT_THROW(match_imatrix(foreign, src, matrices, missing), Error);
}

// With activation-like importance (log-normal per column, as real imatrices look), every
// type's importance-weighted error is no larger with the importance than without.
TEST(Imatrix, WeightedQuantizationLowersTheWeightedError) {
  const DType types[] = {DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::Q8_0,
                         DType::Q4_K, DType::Q5_K, DType::Q6_K};
  std::mt19937 rng(5);
  std::normal_distribution<float> g(0.0f, 1.0f);
  const int n = 1024, rows = 16;
  std::vector<float> imp(n);
  for (float& v : imp) v = std::exp(2.0f * g(rng));
  for (DType t : types) {
    double plain = 0, weighted = 0;
    std::vector<uint8_t> q(*dtype_bytes(t, n));
    std::vector<float> x(n), y(n);
    for (int r = 0; r < rows; ++r) {
      for (float& v : x) v = 0.02f * g(rng);
      for (const float* w : {static_cast<const float*>(nullptr), static_cast<const float*>(imp.data())}) {
        quantize_row(t, x.data(), n, q.data(), w);
        dtype_traits(t).dequantize(q.data(), y.data(), n / dtype_traits(t).block_size);
        double e = 0;
        for (int i = 0; i < n; ++i) e += imp[i] * (x[i] - y[i]) * (x[i] - y[i]);
        (w ? weighted : plain) += e;
      }
    }
    EXPECT_LE(weighted, plain) << dtype_name(t);
    std::printf("%s: weighted error with importance / without = %.3f\n", dtype_name(t), weighted / plain);
  }
}
