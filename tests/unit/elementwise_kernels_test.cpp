// The fused element-wise kernels (RMSNorm, RoPE, RoPE + f16 KV write, SwiGLU/GeGLU): the
// active table and every SIMD table this CPU runs against the scalar references over many shapes (odd
// sizes, sizes that are not multiples of the vector width), and the vectorized exp
// against std::exp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "base/cpu_features.hpp"
#include "kernels/ops.hpp"
#include "tensor/fp16.hpp"
#if defined(MINNOW_HAVE_X86_KERNELS)
#include "kernels/x86/elementwise.hpp"
#endif
#if defined(MINNOW_HAVE_ARM_KERNELS)
#include "kernels/arm/exp_neon.hpp"
#endif

using namespace minnow;
using namespace minnow::kernels;

namespace {

std::vector<float> random_floats(int64_t n, std::mt19937& rng, float scale = 1.0f) {
  std::normal_distribution<float> d(0.0f, scale);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = d(rng);
  return v;
}

// The tables to check: the one in use, and every SIMD one this CPU runs.
std::vector<const KernelTable*> tables_under_test() {
  std::vector<const KernelTable*> t{&active()};
  for (const KernelTable* k : simd_kernels())
    if (k != &active()) t.push_back(k);
  return t;
}

// Relative difference, with `floor` keeping values near zero from dominating.
double rel_diff(float got, float want, double floor) {
  return std::fabs(static_cast<double>(got) - want) / std::max(std::fabs(static_cast<double>(want)), floor);
}

const int64_t kSizes[] = {1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 64, 100, 576, 1023, 1536, 2048};

// cos/sin of head_dim/2 angles of a position far enough out that every angle is large.
void angles(int64_t head_dim, float pos, std::vector<float>& cos, std::vector<float>& sin) {
  const int64_t half = head_dim / 2;
  cos.resize(static_cast<size_t>(half));
  sin.resize(static_cast<size_t>(half));
  for (int64_t i = 0; i < half; ++i) {
    const double a = pos * std::pow(10000.0, -2.0 * static_cast<double>(i) / static_cast<double>(head_dim));
    cos[static_cast<size_t>(i)] = static_cast<float>(std::cos(a));
    sin[static_cast<size_t>(i)] = static_cast<float>(std::sin(a));
  }
}

}  // namespace

// Same arithmetic as the reference but the double sum of squares in another order: at
// most one rounding of the scale apart (rel 1e-6 allowed; in practice 0 or 1 ulp).
TEST(ElementwiseKernels, RmsNormMatchesReference) {
  std::mt19937 rng(11);
  for (const KernelTable* kt : tables_under_test())
    for (int64_t d : kSizes)
      for (int64_t rows : {1, 3}) {
        auto x = random_floats(rows * d, rng, 3.0f), w = random_floats(d, rng);
        std::vector<float> want(x.size()), got(x.size());
        ref_kernels().rmsnorm(x.data(), w.data(), want.data(), rows, d, 1e-6f);
        kt->rmsnorm(x.data(), w.data(), got.data(), rows, d, 1e-6f);
        for (size_t i = 0; i < x.size(); ++i)
          ASSERT_LE(rel_diff(got[i], want[i], 1e-30), 1e-6) << kt->name << " d=" << d << " rows=" << rows << " i=" << i;
        // In place gives the same numbers.
        kt->rmsnorm(x.data(), w.data(), x.data(), rows, d, 1e-6f);
        EXPECT_EQ(x, got) << kt->name << " d=" << d;
      }
}

// A row's result does not depend on the rows around it (batched decode == one at a time).
TEST(ElementwiseKernels, RmsNormRowsAreIndependent) {
  std::mt19937 rng(12);
  const int64_t d = 576, rows = 5;
  auto x = random_floats(rows * d, rng), w = random_floats(d, rng);
  std::vector<float> all(x.size()), one(static_cast<size_t>(d));
  active().rmsnorm(x.data(), w.data(), all.data(), rows, d, 1e-5f);
  for (int64_t r = 0; r < rows; ++r) {
    active().rmsnorm(&x[static_cast<size_t>(r * d)], w.data(), one.data(), 1, d, 1e-5f);
    EXPECT_TRUE(std::equal(one.begin(), one.end(), all.begin() + r * d)) << "row " << r;
  }
}

// The rotation does the reference's multiplies and adds in its order: bit for bit.
TEST(ElementwiseKernels, RopeMatchesReferenceBothStyles) {
  std::mt19937 rng(13);
  std::vector<float> cos, sin;
  for (const KernelTable* kt : tables_under_test())
    for (bool half_split : {false, true})
      for (int64_t head_dim : {2, 6, 8, 14, 16, 32, 64, 80, 128, 256, 520, 1030})
        for (int64_t heads : {1, 3, 9, 15}) {
          angles(head_dim, 77.0f, cos, sin);
          auto want = random_floats(heads * head_dim, rng);
          auto got = want;
          ref_kernels().rope(want.data(), heads, head_dim, cos.data(), sin.data(), half_split);
          kt->rope(got.data(), heads, head_dim, cos.data(), sin.data(), half_split);
          ASSERT_EQ(got, want) << kt->name << " half_split=" << half_split << " head_dim=" << head_dim
                               << " heads=" << heads;
        }
}

// The reference rotation is RoPE: each pair keeps its length and turns by its angle.
TEST(ElementwiseKernels, RopeReferenceRotatesThePairs) {
  std::vector<float> cos, sin;
  const int64_t hd = 8;
  angles(hd, 3.0f, cos, sin);
  for (bool half_split : {false, true}) {
    std::vector<float> x(hd);
    for (int64_t i = 0; i < hd; ++i) x[static_cast<size_t>(i)] = static_cast<float>(i + 1);
    auto y = x;
    ref_kernels().rope(y.data(), 1, hd, cos.data(), sin.data(), half_split);
    for (int64_t i = 0; i < hd / 2; ++i) {
      const size_t a = static_cast<size_t>(half_split ? i : 2 * i),
                   b = static_cast<size_t>(half_split ? i + hd / 2 : 2 * i + 1);
      const double ang = 3.0 * std::pow(10000.0, -2.0 * static_cast<double>(i) / hd);
      EXPECT_NEAR(y[a], x[a] * std::cos(ang) - x[b] * std::sin(ang), 1e-5);
      EXPECT_NEAR(y[b], x[a] * std::sin(ang) + x[b] * std::cos(ang), 1e-5);
    }
  }
}

// RoPE + f16 KV write = the rotation then the scalar f32 -> f16 conversion, bit for bit,
// with k left untouched; values around the f16 limits included.
TEST(ElementwiseKernels, RopeStoreKvF16MatchesRotateThenConvert) {
  std::mt19937 rng(14);
  std::vector<float> cos, sin;
  for (const KernelTable* kt : tables_under_test())
    for (bool half_split : {false, true})
      for (int64_t head_dim : {2, 6, 32, 64, 128, 520})
        for (int64_t heads : {1, 3, 5}) {
          angles(head_dim, 1234.0f, cos, sin);
          const int64_t n = heads * head_dim;
          auto k = random_floats(n, rng, 100.0f), v = random_floats(n, rng, 100.0f);
          if (n > 5) v[1] = 1e-6f, v[2] = -0.0f, v[3] = 70000.0f, v[4] = 65519.0f, k[5] = 3e-5f;
          const auto k_before = k;
          auto rotated = k;
          ref_kernels().rope(rotated.data(), heads, head_dim, cos.data(), sin.data(), half_split);
          std::vector<uint16_t> k_want(static_cast<size_t>(n)), v_want(static_cast<size_t>(n));
          for (size_t i = 0; i < k_want.size(); ++i)
            k_want[i] = fp32_to_fp16(rotated[i]), v_want[i] = fp32_to_fp16(v[i]);
          std::vector<uint16_t> k_got(k_want.size()), v_got(v_want.size());
          kt->rope_store_kv_f16(k.data(), v.data(), heads, head_dim, cos.data(), sin.data(), half_split, k_got.data(),
                                v_got.data());
          ASSERT_EQ(k_got, k_want) << kt->name << " half_split=" << half_split << " head_dim=" << head_dim
                                   << " heads=" << heads;
          ASSERT_EQ(v_got, v_want) << kt->name << " head_dim=" << head_dim << " heads=" << heads;
          ASSERT_EQ(k, k_before);
        }
}

// SIMD activations vs the references' std::exp / std::tanh formulas. The GELU reference
// itself loses digits to 1 + tanh(u) for negative x (cancellation), hence the tolerance
// on the scale of |gate * up| besides the relative one.
TEST(ElementwiseKernels, GluMatchesReference) {
  std::mt19937 rng(15);
  for (const KernelTable* kt : tables_under_test())
    for (bool gelu : {false, true})
      for (int64_t n : kSizes) {
        auto g = random_floats(n, rng, 4.0f), u = random_floats(n, rng);
        if (n > 4) g[0] = 0.0f, g[1] = -100.0f, g[2] = 100.0f, g[3] = -20.0f;
        std::vector<float> want(g.size()), got(g.size());
        (gelu ? ref_kernels().glu_gelu_tanh : ref_kernels().glu_silu)(g.data(), u.data(), want.data(), n);
        (gelu ? kt->glu_gelu_tanh : kt->glu_silu)(g.data(), u.data(), got.data(), n);
        for (size_t i = 0; i < g.size(); ++i) {
          const double tol = 1e-6 * std::fabs(want[i]) + 1e-7 * std::fabs(g[i] * u[i]) + 1e-30;
          ASSERT_LE(std::fabs(static_cast<double>(got[i]) - want[i]), tol)
              << kt->name << (gelu ? " gelu" : " silu") << " n=" << n << " i=" << i << " g=" << g[i];
        }
        // out may be gate.
        (gelu ? kt->glu_gelu_tanh : kt->glu_silu)(g.data(), u.data(), g.data(), n);
        EXPECT_EQ(g, got) << kt->name << " n=" << n;
      }
}

// Sigmoid against double-precision truth (relative, absolute below 1e-6) over its whole
// range, saturating ends included, lengths ending in a partial vector, and in place.
TEST(ElementwiseKernels, SigmoidIsAccurate) {
  for (const KernelTable* kt : tables_under_test())
    for (int64_t n : {1, 7, 8, 9, 20001}) {
      std::vector<float> x(static_cast<size_t>(n)), out(x.size());
      for (int64_t i = 0; i < n; ++i) x[static_cast<size_t>(i)] = -100.0f + 200.0f * static_cast<float>(i) / std::max<int64_t>(n - 1, 1);
      kt->sigmoid(x.data(), out.data(), n);
      double worst = 0;
      for (size_t i = 0; i < x.size(); ++i)
        worst = std::max(worst, rel_diff(out[i], static_cast<float>(1 / (1 + std::exp(-static_cast<double>(x[i])))), 1e-6));
      EXPECT_LE(worst, 1e-6) << kt->name << " n=" << n;
      kt->sigmoid(x.data(), x.data(), n);
      EXPECT_EQ(x, out) << kt->name << " n=" << n;
    }
}

// The activations against double-precision truth (relative, absolute below 1e-3): the
// SIMD forms measure 1.4e-7 (SiLU) and 7.4e-7 (GELU, mostly the float cubic's rounding;
// computed as x * sigmoid(2u), free of the reference's cancellation for x < 0).
TEST(ElementwiseKernels, GluActivationsAreAccurate) {
  const int64_t n = 20001;
  std::vector<float> g(static_cast<size_t>(n)), one(static_cast<size_t>(n), 1.0f), out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) g[static_cast<size_t>(i)] = -30.0f + 60.0f * static_cast<float>(i) / (n - 1);
  for (const KernelTable* kt : tables_under_test())
    for (bool gelu : {false, true}) {
      (gelu ? kt->glu_gelu_tanh : kt->glu_silu)(g.data(), one.data(), out.data(), n);
      double worst = 0;
      for (size_t i = 0; i < g.size(); ++i) {
        const double x = g[i];
        // GELU as x * sigmoid(2u): the same function, without 1 + tanh's cancellation.
        const double z = gelu ? 2 * 0.7978845608028654 * (x + 0.044715 * x * x * x) : x;
        const double truth = x / (1 + std::exp(-z));
        worst = std::max(worst, rel_diff(out[i], static_cast<float>(truth), 1e-3));
      }
      // The scalar GELU (PyTorch's formula) is only accurate in absolute terms for x < 0.
      if (kt == &ref_kernels() && gelu) continue;
      EXPECT_LE(worst, 1e-6) << kt->name << (gelu ? " gelu" : " silu");
    }
}

#if defined(MINNOW_HAVE_X86_KERNELS) || defined(MINNOW_HAVE_ARM_KERNELS)
// The vectorized exp behind the activations (AVX2, or NEON's copy of it): max relative
// error vs std::exp (in double) over its whole range, including lengths that end in a
// partial vector (measured 1.2e-7).
TEST(ElementwiseKernels, VectorExpIsAccurate) {
#if defined(MINNOW_HAVE_X86_KERNELS)
  if (!cpu_features().avx2_fma_f16c) GTEST_SKIP() << "no AVX2 on this CPU";
  const auto exp_simd = exp_avx2;
#else
  const auto exp_simd = exp_neon;
#endif
  for (int64_t n : {1, 7, 8, 9, 100003}) {
    std::vector<float> x(static_cast<size_t>(n)), y(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i)
      x[static_cast<size_t>(i)] = -87.0f + 175.0f * static_cast<float>(i) / std::max<int64_t>(n - 1, 1);
    exp_simd(x.data(), y.data(), n);
    double worst = 0;
    for (size_t i = 0; i < x.size(); ++i)
      worst = std::max(worst, rel_diff(y[i], static_cast<float>(std::exp(static_cast<double>(x[i]))), 1e-37));
    EXPECT_LE(worst, 2.5e-7) << "n=" << n;
  }
  const float specials[8] = {0.0f, -0.0f, 1.0f, -1.0f, -200.0f, 200.0f, 88.0f, -87.3f};
  float y[8];
  exp_simd(specials, y, 8);
  EXPECT_EQ(y[0], 1.0f);
  EXPECT_EQ(y[1], 1.0f);
  EXPECT_NEAR(y[2], 2.718281828f, 3e-7f);
  EXPECT_NEAR(y[3], 0.3678794412f, 1e-7f);
  EXPECT_LE(y[4], 2e-38f);  // saturated at the bottom of the range
  EXPECT_TRUE(std::isfinite(y[5]) && y[5] > 1e38f);  // and at the top
}
#endif
