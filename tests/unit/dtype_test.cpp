// Dequantization of hand-built blocks with known values, per GGUF block layout.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "tensor/dtype.hpp"
#include "tensor/fp16.hpp"

using namespace minnow;

namespace {

void put_half(std::vector<uint8_t>& b, size_t off, float v) {
  uint16_t h = fp32_to_fp16(v);
  std::memcpy(&b[off], &h, 2);
}

std::vector<float> deq(DType t, const std::vector<uint8_t>& blk) {
  const DTypeTraits& tr = dtype_traits(t);
  EXPECT_EQ(static_cast<size_t>(tr.block_bytes), blk.size());
  std::vector<float> out(static_cast<size_t>(tr.block_size));
  tr.dequantize(blk.data(), out.data(), 1);
  return out;
}

}  // namespace

TEST(DType, TraitsMatchGguf) {
  struct Row { DType t; int64_t bs, bytes; };
  for (Row r : {Row{DType::F32, 1, 4}, {DType::F16, 1, 2}, {DType::BF16, 1, 2}, {DType::Q4_0, 32, 18},
                {DType::Q4_1, 32, 20}, {DType::Q5_0, 32, 22}, {DType::Q5_1, 32, 24}, {DType::Q8_0, 32, 34},
                {DType::Q4_K, 256, 144}, {DType::Q5_K, 256, 176}, {DType::Q6_K, 256, 210}}) {
    EXPECT_EQ(dtype_traits(r.t).block_size, r.bs) << dtype_name(r.t);
    EXPECT_EQ(dtype_traits(r.t).block_bytes, r.bytes) << dtype_name(r.t);
  }
  EXPECT_EQ(dtype_traits(uint32_t{99}), nullptr);
  EXPECT_FALSE(dtype_bytes(DType::Q4_0, 33).has_value());
  EXPECT_EQ(*dtype_bytes(DType::Q4_0, 64), 36u);
}

TEST(DType, HalfConversions) {
  for (float v : {0.0f, 1.0f, -2.5f, 65504.0f, 6.1035156e-05f, 5.9604645e-08f, -0.33325195f})
    EXPECT_EQ(fp16_to_fp32(fp32_to_fp16(v)), v);
  EXPECT_EQ(fp32_to_fp16(1e6f), 0x7c00);
  EXPECT_EQ(bf16_to_fp32(0x3f80), 1.0f);
}

TEST(DType, Q4_0) {
  std::vector<uint8_t> b(18);
  put_half(b, 0, 0.5f);
  for (int j = 0; j < 16; ++j) b[2 + j] = static_cast<uint8_t>(j | ((15 - j) << 4));
  auto y = deq(DType::Q4_0, b);
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(y[j], (j - 8) * 0.5f);
    EXPECT_EQ(y[j + 16], (15 - j - 8) * 0.5f);
  }
}

TEST(DType, Q4_1) {
  std::vector<uint8_t> b(20);
  put_half(b, 0, 0.25f);
  put_half(b, 2, -1.0f);
  for (int j = 0; j < 16; ++j) b[4 + j] = static_cast<uint8_t>(j | (3 << 4));
  auto y = deq(DType::Q4_1, b);
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(y[j], j * 0.25f - 1.0f);
    EXPECT_EQ(y[j + 16], 3 * 0.25f - 1.0f);
  }
}

TEST(DType, Q5_0AndQ5_1) {
  std::vector<uint8_t> b(22);
  put_half(b, 0, 1.0f);
  uint32_t qh = 0x80000001u;  // fifth bit set for element 0 and element 31
  std::memcpy(&b[2], &qh, 4);
  for (int j = 0; j < 16; ++j) b[6 + j] = 0x21;  // low nibble 1, high nibble 2
  auto y = deq(DType::Q5_0, b);
  EXPECT_EQ(y[0], 17 - 16);
  EXPECT_EQ(y[1], 1 - 16);
  EXPECT_EQ(y[16], 2 - 16);
  EXPECT_EQ(y[31], 18 - 16);

  std::vector<uint8_t> c(24);
  put_half(c, 0, 2.0f);
  put_half(c, 2, 0.5f);
  std::memcpy(&c[4], &qh, 4);
  for (int j = 0; j < 16; ++j) c[8 + j] = 0x21;
  auto z = deq(DType::Q5_1, c);
  EXPECT_EQ(z[0], 17 * 2.0f + 0.5f);
  EXPECT_EQ(z[1], 1 * 2.0f + 0.5f);
  EXPECT_EQ(z[31], 18 * 2.0f + 0.5f);
}

TEST(DType, Q8_0) {
  std::vector<uint8_t> b(34);
  put_half(b, 0, 0.125f);
  for (int j = 0; j < 32; ++j) b[2 + j] = static_cast<uint8_t>(static_cast<int8_t>(j - 16));
  auto y = deq(DType::Q8_0, b);
  for (int j = 0; j < 32; ++j) EXPECT_EQ(y[j], (j - 16) * 0.125f);
}

TEST(DType, Q4_K) {
  std::vector<uint8_t> b(144);
  put_half(b, 0, 1.0f);   // d
  put_half(b, 2, 0.5f);   // dmin
  // sub-blocks 0..3: scale = j+1, min = j; sub-blocks 4..7: scale = 2, min = 1 (low nibbles of bytes 8..11)
  for (int j = 0; j < 4; ++j) {
    b[4 + j] = static_cast<uint8_t>(j + 1);
    b[4 + 4 + j] = static_cast<uint8_t>(j);
    b[4 + 8 + j] = static_cast<uint8_t>(2 | (1 << 4));
  }
  for (int l = 0; l < 128; ++l) b[16 + l] = static_cast<uint8_t>(3 | (5 << 4));
  auto y = deq(DType::Q4_K, b);
  // element 0: sub-block 0 (low nibble 3): 1*1*3 - 0.5*0 = 3
  EXPECT_EQ(y[0], 3.0f);
  // element 32: sub-block 1 (high nibble 5): scale 2, min 1 -> 10 - 0.5
  EXPECT_EQ(y[32], 9.5f);
  // element 64: sub-block 2: scale 3, min 2 -> 9 - 1
  EXPECT_EQ(y[64], 8.0f);
  // element 255: sub-block 7 (high nibble 5): scale 2, min 1 -> 10 - 0.5
  EXPECT_EQ(y[255], 9.5f);
}

TEST(DType, Q5_K) {
  std::vector<uint8_t> b(176);
  put_half(b, 0, 1.0f);
  put_half(b, 2, 1.0f);
  for (int j = 0; j < 4; ++j) {
    b[4 + j] = 1;       // scale 1 for sub-blocks 0..3
    b[4 + 4 + j] = 0;   // min 0
    b[4 + 8 + j] = 1;   // sub-blocks 4..7: scale 1, min 0
  }
  b[16 + 0] = 0x01 | 0x04;  // qh[0]: fifth bit of element 0 (sub-block 0) and element 64 (sub-block 2)
  for (int l = 0; l < 128; ++l) b[48 + l] = 0x72;
  auto y = deq(DType::Q5_K, b);
  EXPECT_EQ(y[0], 2 + 16);
  EXPECT_EQ(y[1], 2);
  EXPECT_EQ(y[32], 7);
  EXPECT_EQ(y[64], 2 + 16);
  EXPECT_EQ(y[96], 7);
}

TEST(DType, Q6_K) {
  std::vector<uint8_t> b(210);
  for (int l = 0; l < 128; ++l) b[l] = 0x21;        // ql: low nibble 1, high nibble 2
  for (int l = 0; l < 64; ++l) b[128 + l] = 0xE4;   // qh: 2-bit fields 0,1,2,3 (low to high)
  for (int s = 0; s < 16; ++s) b[192 + s] = static_cast<uint8_t>(static_cast<int8_t>(s - 8));
  put_half(b, 208, 0.5f);
  auto y = deq(DType::Q6_K, b);
  // element 0: q = (1 | 0<<4) - 32 = -31, scale index 0 -> -8
  EXPECT_EQ(y[0], 0.5f * -8 * -31);
  // element 32: q = (ql[32] low 1 | 1<<4) - 32 = -15, scale index 2 -> -6
  EXPECT_EQ(y[32], 0.5f * -6 * -15);
  // element 64: q = (2 | 2<<4) - 32 = 2, scale 4 -> -4
  EXPECT_EQ(y[64], 0.5f * -4 * 2);
  // element 96: q = (2 | 3<<4) - 32 = 18, scale 6 -> -2
  EXPECT_EQ(y[96], 0.5f * -2 * 18);
  // element 144: second half, l = 16, is = 1: scale index 8 + 1 = 9 -> 1
  EXPECT_EQ(y[144], 0.5f * 1 * -31);
}
