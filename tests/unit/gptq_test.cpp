// GPTQ (quant/gptq, quantize_row_gptq, quant/hessian_collector): the factor against its
// definition, the output error against plain rounding on correlated inputs for every type,
// the moments against a direct sum, and the collector's means, shared inputs and head.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "quant/gptq.hpp"
#include "models/model.hpp"
#include "quant/hessian_collector.hpp"
#include "quant/quantize.hpp"
#include "tensor/dtype.hpp"

using namespace minnow;
using namespace minnow::quant;

namespace {

// Tokens whose columns are correlated (a few shared factors plus noise), with unequal scales.
std::vector<float> correlated_inputs(int tokens, int n, std::mt19937& rng) {
  std::normal_distribution<float> g;
  const int k = 4;
  std::vector<float> mix(static_cast<size_t>(k * n)), scale(static_cast<size_t>(n));
  for (auto& v : mix) v = g(rng);
  for (int j = 0; j < n; ++j) scale[j] = std::exp(g(rng));
  std::vector<float> x(static_cast<size_t>(tokens * n));
  for (int t = 0; t < tokens; ++t) {
    float f[k];
    for (float& v : f) v = g(rng);
    for (int j = 0; j < n; ++j) {
      float v = 0.3f * g(rng);
      for (int a = 0; a < k; ++a) v += f[a] * mix[a * n + j];
      x[t * n + j] = v * scale[j];
    }
  }
  return x;
}

std::vector<float> second_moments(const std::vector<float>& x, int tokens, int n) {
  std::vector<float> h(static_cast<size_t>(n * n));
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      double s = 0;
      for (int t = 0; t < tokens; ++t) s += static_cast<double>(x[t * n + i]) * x[t * n + j];
      h[i * n + j] = static_cast<float>(s / tokens);
    }
  return h;
}

// (w - q)^T H (w - q): the mean squared error of the row's output over the tokens.
double output_error(const std::vector<float>& h, const float* w, const float* q, int n) {
  double e = 0;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) e += (w[i] - q[i]) * static_cast<double>(h[i * n + j]) * (w[j] - q[j]);
  return e;
}

}  // namespace

TEST(Gptq, FactorInvertsTheDampedMoments) {
  ThreadPool pool(2);
  std::mt19937 rng(1);
  for (int n : {1, 5, 32, 300}) {
    const auto x = correlated_inputs(64, n, rng);
    auto h = second_moments(x, 64, n);
    if (n > 2)  // a column the calibration never reached
      for (int j = 0; j < n; ++j) h[2 * n + j] = h[j * n + 2] = 0;
    const double damp = 0.01;
    const std::vector<float> u = gptq_factor(h, n, damp, pool);
    double mean_diag = 0;
    for (int i = 0; i < n; ++i) mean_diag += h[i * n + i];
    mean_diag /= n;
    // (U^T U) (H + damp I) = I.
    std::vector<double> uu(static_cast<size_t>(n * n));
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        double s = 0;
        for (int k = 0; k <= std::min(i, j); ++k) s += static_cast<double>(u[k * n + i]) * u[k * n + j];
        uu[i * n + j] = s;
        if (j < i) {
          EXPECT_EQ(u[i * n + j], 0.0f);
        }
      }
    double worst = 0;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        double s = 0;
        for (int k = 0; k < n; ++k) s += uu[i * n + k] * (h[k * n + j] + (k == j ? damp * mean_diag : 0.0));
        worst = std::max(worst, std::fabs(s - (i == j ? 1.0 : 0.0)));
      }
    EXPECT_LT(worst, 1e-3) << "n=" << n;
  }
}

TEST(Gptq, LowerOutputErrorThanRoundingForEveryType) {
  ThreadPool pool(2);
  std::mt19937 rng(7);
  const int n = 512, tokens = 2048;
  const auto x = correlated_inputs(tokens, n, rng);
  const auto h = second_moments(x, tokens, n);
  const std::vector<float> u = gptq_factor(h, n, 0.01, pool);
  std::vector<float> imp(n);
  for (int i = 0; i < n; ++i) imp[i] = h[i * n + i];
  std::normal_distribution<float> g;
  for (DType t : {DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::Q8_0, DType::Q4_K, DType::Q5_K, DType::Q6_K}) {
    const DTypeTraits& tr = dtype_traits(t);
    double plain = 0, weighted = 0, gptq = 0;
    for (int row = 0; row < 8; ++row) {
      std::vector<float> w(n), work, back(n);
      for (float& v : w) v = 0.02f * g(rng);
      std::vector<uint8_t> q(*dtype_bytes(t, n));
      quantize_row(t, w.data(), n, q.data());
      tr.dequantize(q.data(), back.data(), n / tr.block_size);
      plain += output_error(h, w.data(), back.data(), n);
      quantize_row(t, w.data(), n, q.data(), imp.data());
      tr.dequantize(q.data(), back.data(), n / tr.block_size);
      weighted += output_error(h, w.data(), back.data(), n);
      work = w;
      quantize_row_gptq(t, work.data(), n, q.data(), imp.data(), u.data());
      tr.dequantize(q.data(), back.data(), n / tr.block_size);
      gptq += output_error(h, w.data(), back.data(), n);
    }
    EXPECT_LT(gptq, 0.8 * weighted) << tr.name << " plain " << plain << " weighted " << weighted << " gptq " << gptq;
  }
}

TEST(Gptq, SecondMomentsEqualADirectSum) {
  ThreadPool pool(2);
  std::mt19937 rng(3);
  std::vector<float> scratch;
  for (int cols : {1, 3, 4, 17, 64}) {
    for (int rows : {1, 5, 8, 33}) {
      const auto x = correlated_inputs(rows, cols, rng);
      std::vector<float> h(static_cast<size_t>(cols * cols), 0.0f);
      add_second_moments(x.data(), rows, cols, h.data(), scratch, pool);
      add_second_moments(x.data(), rows, cols, h.data(), scratch, pool);  // sums accumulate
      const auto want = second_moments(x, rows, cols);
      for (int i = 0; i < cols; ++i)
        for (int j = i; j < cols; ++j)
          EXPECT_NEAR(h[i * cols + j], 2 * rows * want[i * cols + j], 1e-4 * (1 + std::fabs(2 * rows * want[i * cols + j])))
              << cols << "x" << rows << " at " << i << "," << j;
    }
  }
}

TEST(Gptq, CollectorKeepsMeansPerSharedInputAndTheHeadsDiagonal) {
  ThreadPool pool(2);
  LoadedModel m;
  m.config.n_layers = 2;
  const uint8_t a = 0;
  m.token_embd.data = m.output.data = &a;  // tied: the head is token_embd.weight
  HessianCollector c(m, pool);
  const float x[] = {1, 2, 3, -1, -2, -3};  // 2 rows x 3 columns
  c.observe(0, MatmulSite::FfnGateUp, x, 2, 3);
  c.observe(0, MatmulSite::FfnGateUp, x, 1, 3);
  c.observe(-1, MatmulSite::Output, x, 2, 3);
  const auto r = c.take();
  ASSERT_EQ(r.size(), 3u);  // gate and up of layer 0, and the head
  const SecondMoments& g = *r.at("blk.0.ffn_gate.weight");
  EXPECT_EQ(r.at("blk.0.ffn_up.weight").get(), &g);  // one object for the shared input
  EXPECT_EQ(g.rows, 3);
  // Three rows: (1,2,3) twice and (-1,-2,-3) once; x x^T is the same for both signs.
  const std::vector<float> want = {1, 2, 3, 2, 4, 6, 3, 6, 9};
  ASSERT_EQ(g.h.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_FLOAT_EQ(g.h[i], want[i]) << i;
  EXPECT_EQ(g.diag, (std::vector<float>{1, 4, 9}));
  const SecondMoments& head = *r.at("token_embd.weight");
  EXPECT_TRUE(head.h.empty());
  EXPECT_EQ(head.diag, (std::vector<float>{1, 4, 9}));
  EXPECT_TRUE(c.take().empty());  // taken once
}
