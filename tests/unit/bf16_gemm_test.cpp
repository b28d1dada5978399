// The bf16 GEMM (kernels/bf16_gemm.hpp): rounding against hand-worked cases, packing, and
// every kernel this CPU runs (AVX512-BF16, AVX2) against the scalar reference over many
// shapes (rows not a multiple of 16 or 32, token counts around the tile sizes, odd column
// pairs), then matmul_bf16 against an f64 product of the rounded values; and GELU(erf).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "base/cpu_features.hpp"
#include "base/thread_pool.hpp"
#include "kernels/bf16_gemm.hpp"
#include "kernels/ops.hpp"

using namespace minnow;
using namespace minnow::kernels;

namespace minnow::kernels {
#if defined(MINNOW_HAVE_X86_KERNELS)
void gemm_bf16_avx2(const uint16_t*, int, int64_t, const uint16_t*, int64_t, int64_t, float*, int64_t, int64_t,
                    const float*);
void gemm_bf16_avx512(const uint16_t*, int, int64_t, const uint16_t*, int64_t, int64_t, float*, int64_t, int64_t,
                      const float*);
void round_bf16_avx2(const float*, uint16_t*, int64_t);
#endif
#if defined(MINNOW_HAVE_ARM_KERNELS)
void gemm_bf16_neon(const uint16_t*, int, int64_t, const uint16_t*, int64_t, int64_t, float*, int64_t, int64_t,
                    const float*);
#endif
}  // namespace minnow::kernels

namespace {

float from_bits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

TEST(Bf16, RoundsToNearestEvenAndFlushesDenormals) {
  EXPECT_EQ(to_bf16(1.0f), 0x3F80);
  EXPECT_EQ(to_bf16(-2.0f), 0xC000);
  EXPECT_EQ(to_bf16(from_bits(0x3F808000)), 0x3F80);  // halfway, even below: down
  EXPECT_EQ(to_bf16(from_bits(0x3F818000)), 0x3F82);  // halfway, odd below: up
  EXPECT_EQ(to_bf16(from_bits(0x3F808001)), 0x3F81);  // above halfway: up
  EXPECT_EQ(to_bf16(from_bits(0x00000001)), 0x0000);  // denormal: +0
  EXPECT_EQ(to_bf16(from_bits(0x80400000)), 0x8000);  // negative denormal: -0
  EXPECT_EQ(to_bf16(std::numeric_limits<float>::infinity()), 0x7F80);
  EXPECT_TRUE(std::isnan(from_bf16(to_bf16(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_EQ(to_bf16(from_bits(0x7F7FFFFF)), 0x7F80);  // the largest float rounds to infinity
  for (float x : {0.1f, -3.14159f, 1e-30f, 65504.0f}) EXPECT_NEAR(from_bf16(to_bf16(x)), x, std::fabs(x) / 256);
}

struct Case {
  int64_t rows, cols, tokens;
};

std::vector<Case> shapes() {
  std::vector<Case> v;
  for (int64_t rows : {1, 15, 16, 17, 31, 32, 33, 48, 70})
    for (int64_t cols : {2, 6, 32, 94, 384})
      for (int64_t tokens : {1, 3, 4, 5, 11, 12, 13, 25}) v.push_back({rows, cols, tokens});
  return v;
}

std::vector<float> randoms(size_t n, std::mt19937& rng) {
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

struct Packed {
  std::vector<uint16_t> panels, x;
  std::vector<float> w, bias;
};

Packed make(const Case& c, std::mt19937& rng) {
  Packed p;
  p.w = randoms(static_cast<size_t>(c.rows * c.cols), rng);
  p.panels.resize(bf16_panels_size(c.rows, c.cols));
  const WeightView view{DType::F32, reinterpret_cast<const uint8_t*>(p.w.data()), c.rows, c.cols,
                        static_cast<size_t>(c.cols) * 4, nullptr};
  pack_bf16_panels(view, p.panels.data());
  for (float v : randoms(static_cast<size_t>(c.tokens * c.cols), rng)) p.x.push_back(to_bf16(v));
  p.bias = randoms(static_cast<size_t>(c.rows), rng);
  return p;
}

// Every panel pair of the matrix through fn, as matmul_bf16 calls the kernels.
std::vector<float> run(GemmBf16Fn fn, const Case& c, const Packed& p, bool bias = false) {
  std::vector<float> y(static_cast<size_t>(c.rows * c.tokens), -7.0f);
  for (int64_t r0 = 0; r0 < c.rows; r0 += 2 * kBf16PanelRows) {
    const int np = c.rows - r0 > kBf16PanelRows ? 2 : 1;
    fn(p.panels.data() + r0 * c.cols, np, c.cols, p.x.data(), c.cols, c.tokens, y.data() + r0, c.rows, c.rows - r0,
       bias ? p.bias.data() + r0 : nullptr);
  }
  return y;
}

TEST(Bf16, ReferenceIsTheProductOfTheRoundedValues) {
  std::mt19937 rng(1);
  for (const Case& c : shapes()) {
    const Packed p = make(c, rng);
    const std::vector<float> y = run(gemm_bf16_ref, c, p, true);
    for (int64_t t = 0; t < c.tokens; ++t)
      for (int64_t r = 0; r < c.rows; ++r) {
        double want = p.bias[static_cast<size_t>(r)], mag = std::fabs(want);
        for (int64_t k = 0; k < c.cols; ++k) {
          const double prod = static_cast<double>(from_bf16(to_bf16(p.w[static_cast<size_t>(r * c.cols + k)]))) *
                              from_bf16(p.x[static_cast<size_t>(t * c.cols + k)]);
          want += prod;
          mag += std::fabs(prod);
        }
        ASSERT_NEAR(y[static_cast<size_t>(t * c.rows + r)], want, 1e-5 * mag + 1e-6)
            << c.rows << "x" << c.cols << " tokens " << c.tokens << " at " << t << "," << r;
      }
  }
}

TEST(Bf16, SimdKernelsMatchTheReference) {
  std::vector<std::pair<const char*, GemmBf16Fn>> kernels;
#if defined(MINNOW_HAVE_X86_KERNELS)
  if (cpu_features().avx2_fma_f16c) kernels.emplace_back("avx2", gemm_bf16_avx2);
  if (cpu_features().avx512_bf16) kernels.emplace_back("avx512bf16", gemm_bf16_avx512);
#endif
#if defined(MINNOW_HAVE_ARM_KERNELS)
  kernels.emplace_back("neon", gemm_bf16_neon);
#endif
  if (kernels.empty()) GTEST_SKIP() << "no SIMD bf16 kernel on this CPU";
  std::mt19937 rng(2);
  for (const Case& c : shapes()) {
    const Packed p = make(c, rng);
    const bool bias = c.tokens % 2;
    const std::vector<float> want = run(gemm_bf16_ref, c, p, bias);
    for (auto [name, fn] : kernels) {
      const std::vector<float> got = run(fn, c, p, bias);
      for (size_t i = 0; i < want.size(); ++i)
        ASSERT_NEAR(got[i], want[i], 1e-5 * (std::fabs(want[i]) + std::sqrt(static_cast<double>(c.cols))))
            << name << " " << c.rows << "x" << c.cols << " tokens " << c.tokens << " at " << i;
    }
  }
}

TEST(Bf16, MatmulSplitsWorkWithoutChangingResults) {
  std::mt19937 rng(3);
  ThreadPool pool(2);
  for (const Case& c : {Case{70, 94, 1}, Case{384, 384, 100}, Case{33, 32, 49}}) {
    const Packed p = make(c, rng);
    std::vector<float> x = randoms(static_cast<size_t>(c.tokens * c.cols), rng);
    std::vector<uint16_t> xb;
    for (float v : x) xb.push_back(to_bf16(v));
    Packed q = p;
    q.x = xb;
    const std::vector<float> want = run(bf16_kernels().gemm, c, q, true);
    std::vector<float> y(want.size());
    matmul_bf16({c.rows, c.cols, p.panels.data()}, x.data(), c.tokens, y.data(), pool, p.bias.data());
    EXPECT_EQ(y, want) << c.rows << "x" << c.cols << " tokens " << c.tokens;
  }
}

TEST(Bf16, SimdRoundingGivesTheSameBits) {
#if defined(MINNOW_HAVE_X86_KERNELS)
  if (!cpu_features().avx2_fma_f16c) GTEST_SKIP() << "no AVX2";
  std::mt19937 rng(4);
  std::vector<float> x = randoms(1000, rng);
  for (uint32_t b : {0x00000001u, 0x80400000u, 0x7F800000u, 0xFF800000u, 0x7FC00001u, 0x7F800001u, 0x3F808000u,
                     0x3F818000u, 0x7F7FFFFFu, 0x00800000u, 0x80000000u})
    x.push_back(from_bits(b));
  std::vector<uint16_t> want(x.size()), got(x.size());
  round_bf16_ref(x.data(), want.data(), static_cast<int64_t>(x.size()));
  round_bf16_avx2(x.data(), got.data(), static_cast<int64_t>(x.size()));
  EXPECT_EQ(got, want);
#else
  GTEST_SKIP() << "x86 only";
#endif
}

TEST(GeluErf, SimdTablesMatchTheScalarReference) {
  std::vector<float> x;
  for (int i = -12000; i <= 12000; ++i) x.push_back(static_cast<float>(i) * 1e-3f);  // -12..12
  for (float v : {0.0f, -0.0f, 1e-30f, -1e-30f, 30.0f, -30.0f, 88.0f, -88.0f}) x.push_back(v);
  x.resize(x.size() + 3, 0.5f);  // not a multiple of 8
  std::vector<float> want(x.size()), got(x.size());
  ref_kernels().gelu_erf(x.data(), want.data(), static_cast<int64_t>(x.size()));
  for (size_t i = 0; i < x.size(); ++i)  // the reference is x Phi(x)
    ASSERT_NEAR(want[i], 0.5 * x[i] * std::erfc(-x[i] / std::sqrt(2.0)), 1e-6 * (1 + std::fabs(x[i])));
  for (const KernelTable* t : simd_kernels()) {
    t->gelu_erf(x.data(), got.data(), static_cast<int64_t>(x.size()));
    for (size_t i = 0; i < x.size(); ++i)
      ASSERT_NEAR(got[i], want[i], 1e-6 * std::max(1.0f, std::fabs(want[i]))) << t->name << " at x = " << x[i];
    std::vector<float> in_place = x;
    t->gelu_erf(in_place.data(), in_place.data(), static_cast<int64_t>(x.size()));
    EXPECT_EQ(in_place, got) << t->name;
  }
}

}  // namespace
