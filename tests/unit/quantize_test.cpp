// Quantizers (quant/quantize): round trips through the readers' dequantizers
// (tensor/dtype) stay within per-type error bounds; edge cases; bad input refused.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "base/error.hpp"
#include "quant/quantize.hpp"
#include "tensor/dtype.hpp"

using namespace minnow;

namespace {

const DType kQuantTypes[] = {DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::Q8_0,
                             DType::Q4_K, DType::Q5_K, DType::Q6_K};

std::vector<float> round_trip(DType t, const std::vector<float>& x, const float* importance = nullptr) {
  std::vector<uint8_t> q(*dtype_bytes(t, x.size()));
  quantize_row(t, x.data(), static_cast<int64_t>(x.size()), q.data(), importance);
  const DTypeTraits& tr = dtype_traits(t);
  std::vector<float> y(x.size());
  tr.dequantize(q.data(), y.data(), static_cast<int64_t>(x.size()) / tr.block_size);
  return y;
}

std::vector<float> gaussian(size_t n, float sigma, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, sigma);
  std::vector<float> x(n);
  for (float& v : x) v = dist(rng);
  return x;
}

double rel_rms_error(const std::vector<float>& x, const std::vector<float>& y, const float* w = nullptr) {
  double e = 0, s = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double wi = w ? w[i] : 1.0;
    e += wi * (x[i] - y[i]) * (x[i] - y[i]), s += wi * x[i] * x[i];
  }
  return std::sqrt(e / s);
}

// Relative RMS error on Gaussian rows: about a uniform quantizer's step / sqrt(12) over the
// block's range, with some headroom.
double bound(DType t) {
  switch (t) {
    case DType::Q4_0: return 0.12;
    case DType::Q4_1: return 0.11;
    case DType::Q5_0: return 0.06;
    case DType::Q5_1: return 0.055;
    case DType::Q8_0: return 0.008;
    case DType::Q4_K: return 0.10;
    case DType::Q5_K: return 0.05;
    case DType::Q6_K: return 0.025;
    default: return 0;
  }
}

}  // namespace

TEST(Quantize, GaussianRowsWithinBounds) {
  for (DType t : kQuantTypes) {
    for (float sigma : {1.0f, 0.02f, 1e-3f, 300.0f}) {
      const auto x = gaussian(4096, sigma, 7);
      const double err = rel_rms_error(x, round_trip(t, x));
      EXPECT_LT(err, bound(t)) << dtype_name(t) << " sigma " << sigma;
    }
  }
}

TEST(Quantize, KTypesBeatTheirLegacyCousins) {
  const auto x = gaussian(8192, 0.05f, 11);
  EXPECT_LT(rel_rms_error(x, round_trip(DType::Q4_K, x)), rel_rms_error(x, round_trip(DType::Q4_1, x)));
  EXPECT_LT(rel_rms_error(x, round_trip(DType::Q5_K, x)), rel_rms_error(x, round_trip(DType::Q5_1, x)));
  EXPECT_LT(rel_rms_error(x, round_trip(DType::Q6_K, x)), rel_rms_error(x, round_trip(DType::Q5_K, x)));
}

TEST(Quantize, ImportanceLowersTheWeightedError) {
  // Columns the importance marks get most of the weight; the weighted error must drop.
  const auto x = gaussian(4096, 1.0f, 3);
  std::vector<float> imp(x.size(), 0.01f);
  for (size_t i = 0; i < imp.size(); i += 5) imp[i] = 100.0f;
  for (DType t : kQuantTypes) {
    const double plain = rel_rms_error(x, round_trip(t, x), imp.data());
    const double weighted = rel_rms_error(x, round_trip(t, x, imp.data()), imp.data());
    if (t == DType::Q8_0) EXPECT_EQ(weighted, plain) << "Q8_0 keeps the reference rounding";
    else EXPECT_LT(weighted, plain) << dtype_name(t);
  }
}

TEST(Quantize, ZerosAndConstantRows) {
  for (DType t : kQuantTypes) {
    const std::vector<float> zeros(512, 0.0f);
    for (float v : round_trip(t, zeros)) ASSERT_EQ(v, 0.0f) << dtype_name(t);
    for (float c : {0.5f, -3.25f, 1e-3f}) {  // 1e-3: the K types' f16 super-scales go subnormal
      const std::vector<float> x(512, c);
      for (float v : round_trip(t, x)) ASSERT_NEAR(v, c, std::fabs(c) * 5e-3) << dtype_name(t) << " c " << c;
    }
  }
}

TEST(Quantize, TinyValuesStayFiniteAndSmall) {
  for (DType t : kQuantTypes) {
    const auto x = gaussian(512, 1e-9f, 5);
    for (float v : round_trip(t, x)) {
      ASSERT_TRUE(std::isfinite(v));
      ASSERT_LE(std::fabs(v), 1e-8f) << dtype_name(t);
    }
  }
}

TEST(Quantize, HugeValuesAreRefusedNotWrittenAsInf) {
  for (DType t : kQuantTypes) {
    auto x = gaussian(512, 1.0f, 9);
    x[17] = 1e12f;
    std::vector<uint8_t> q(*dtype_bytes(t, x.size()));
    EXPECT_THROW(quantize_row(t, x.data(), 512, q.data()), Error) << dtype_name(t);
  }
  std::vector<float> big(32, 1e6f);
  std::vector<uint8_t> h(64);
  EXPECT_THROW(quantize_row(DType::F16, big.data(), 32, h.data()), Error);
}

TEST(Quantize, NanAndInfAreRefused) {
  for (DType t : {DType::F32, DType::F16, DType::BF16, DType::Q4_0, DType::Q8_0, DType::Q4_K, DType::Q6_K}) {
    for (float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                      -std::numeric_limits<float>::infinity()}) {
      std::vector<float> x(256, 1.0f);
      x[100] = bad;
      std::vector<uint8_t> q(*dtype_bytes(t, 256));
      try {
        quantize_row(t, x.data(), 256, q.data());
        ADD_FAILURE() << dtype_name(t) << " took " << bad;
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("value 100"), std::string::npos) << e.what();
      }
    }
  }
}

TEST(Quantize, RejectsPartialBlocksAndUnknownTypes) {
  std::vector<float> x(48, 1.0f);
  std::vector<uint8_t> q(256);
  EXPECT_THROW(quantize_row(DType::Q4_0, x.data(), 48, q.data()), Error);
  EXPECT_THROW(quantize_row(DType::Q4_K, x.data(), 32, q.data()), Error);
  EXPECT_FALSE(can_quantize(DType::Q2_K));
  EXPECT_THROW(quantize_row(DType::Q2_K, x.data(), 256, q.data()), Error);
}

TEST(Quantize, LegacyReferenceRoundingOnKnownBlocks) {
  // Values on the Q4_0 grid of their own block: exact; the byte layout is the GGUF one.
  std::vector<float> x(32);
  for (int i = 0; i < 32; ++i) x[i] = 0.5f * static_cast<float>((i % 16) - 8);
  x[0] = -4.0f;  // largest magnitude, negative: d = -4 / -8 = 0.5
  std::vector<uint8_t> q(18);
  quantize_row(DType::Q4_0, x.data(), 32, q.data());
  EXPECT_EQ(q[0], 0x00);  // f16 0.5 = 0x3800
  EXPECT_EQ(q[1], 0x38);
  EXPECT_EQ(q[2], 0x00);  // elements 0 and 16: codes 0 and 0
  EXPECT_EQ(q[3], 0x11);
  EXPECT_EQ(round_trip(DType::Q4_0, x), x);
  // Q8_0 rounds halves away from zero: 63.5 -> 64 at d = 1.
  std::vector<float> y(32, 0.0f);
  y[0] = 127.0f, y[1] = 63.5f, y[2] = -63.5f;
  std::vector<uint8_t> q8(34);
  quantize_row(DType::Q8_0, y.data(), 32, q8.data());
  EXPECT_EQ(static_cast<int8_t>(q8[3]), 64);
  EXPECT_EQ(static_cast<int8_t>(q8[4]), -64);
}

TEST(Quantize, FloatTypes) {
  const auto x = gaussian(64, 1.0f, 1);
  EXPECT_EQ(round_trip(DType::F32, x), x);
  EXPECT_LT(rel_rms_error(x, round_trip(DType::F16, x)), 1e-3);
  EXPECT_LT(rel_rms_error(x, round_trip(DType::BF16, x)), 8e-3);
}
