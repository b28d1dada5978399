// Exact conversion between quant types: every value of the source block, bit for bit.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "quant/exact_convert.hpp"
#include "random_quants.hpp"
#include "tensor/dtype.hpp"
#include "tensor/fp16.hpp"

namespace minnow::quant {
namespace {

std::vector<float> dequantize(DType t, const std::vector<uint8_t>& blocks, int64_t n) {
  std::vector<float> out(static_cast<size_t>(n));
  dtype_traits(t).dequantize(blocks.data(), out.data(), n / dtype_traits(t).block_size);
  return out;
}

TEST(ExactConvert, EveryPairKeepsEveryValue) {
  const DType pairs[][2] = {{DType::Q4_0, DType::Q5_0}, {DType::Q4_0, DType::Q8_0}, {DType::Q5_0, DType::Q8_0},
                            {DType::Q4_0, DType::Q4_1}, {DType::Q4_0, DType::Q5_1}, {DType::Q5_0, DType::Q5_1},
                            {DType::Q4_1, DType::Q5_1}, {DType::Q4_K, DType::Q5_K}, {DType::Q6_K, DType::Q6_K},
                            {DType::Q8_0, DType::Q8_0}, {DType::Q5_1, DType::Q5_1}};
  std::mt19937 rng(7);
  const int64_t n = 256 * 12;  // every bit pattern of the codes shows up
  for (const auto& [from, to] : pairs) {
    SCOPED_TRACE(std::string(dtype_name(from)) + " -> " + dtype_name(to));
    ASSERT_TRUE(converts_exactly(from, to));
    const std::vector<uint8_t> src = test_util::random_matrix(from, 1, n, rng);
    std::vector<uint8_t> dst(static_cast<size_t>(*dtype_bytes(to, n)), 0xAA);
    ASSERT_TRUE(convert_exactly(from, to, src.data(), dst.data(), n / dtype_traits(from).block_size));
    const std::vector<float> a = dequantize(from, src, n), b = dequantize(to, dst, n);
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(a[i], b[i]) << i;  // == : -0 as d * q + m is +0
  }
}

TEST(ExactConvert, AMinimumBeyondF16IsRefusedNotRounded) {
  std::vector<uint8_t> q4_0(18, 0x88), q4_1(20);
  const uint16_t d = fp32_to_fp16(10000.0f);  // -8 d = -80000: beyond f16
  std::memcpy(q4_0.data(), &d, 2);
  EXPECT_FALSE(convert_exactly(DType::Q4_0, DType::Q4_1, q4_0.data(), q4_1.data(), 1));
  const uint16_t small = fp32_to_fp16(0.01f);
  std::memcpy(q4_0.data(), &small, 2);
  EXPECT_TRUE(convert_exactly(DType::Q4_0, DType::Q4_1, q4_0.data(), q4_1.data(), 1));
}

TEST(ExactConvert, OnlyWhereTheTargetHoldsTheSource) {
  EXPECT_FALSE(converts_exactly(DType::Q4_1, DType::Q8_0));   // a minimum Q8_0 cannot store
  EXPECT_FALSE(converts_exactly(DType::Q4_K, DType::Q6_K));   // likewise
  EXPECT_FALSE(converts_exactly(DType::Q5_K, DType::Q4_K));   // fewer bits
  EXPECT_FALSE(converts_exactly(DType::Q8_0, DType::Q4_0));
  EXPECT_FALSE(converts_exactly(DType::Q4_0, DType::Q4_K));   // another block shape
}

}  // namespace
}  // namespace minnow::quant
