// Packed-row decode kernels (kernels/packed.hpp): packing round-trips, the scalar kernel
// against a float dot of the dequantized operands, and every SIMD table bit for bit
// against the scalar kernel, for any number of tokens.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <type_traits>
#include <vector>

#include "base/thread_pool.hpp"
#include "kernels/ops.hpp"
#include "kernels/packed.hpp"
#include "random_quants.hpp"
#include "tensor/fp16.hpp"

using namespace minnow;
using namespace minnow::kernels;

namespace {

constexpr DType kTypes[] = {DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::Q8_0,
                            DType::Q4_K, DType::Q5_K, DType::Q6_K};

using test_util::random_matrix;
bool is_k(DType t) { return test_util::is_k_quant(t); }

// Column counts to try: any multiple of the block (256 for K-quants).
std::vector<int64_t> widths(DType t, std::initializer_list<int64_t> plain) {
  if (is_k(t)) return {256, 512, 768, 2048};
  return plain;
}

struct Packed {
  std::vector<uint8_t> file, packed;
  WeightView w;
};

Packed make(DType t, int64_t rows, int64_t cols, std::mt19937& rng) {
  Packed p;
  p.file = random_matrix(t, rows, cols, rng);
  const DTypeTraits& tr = dtype_traits(t);
  p.w = {t, p.file.data(), rows, cols, static_cast<size_t>(cols / tr.block_size * tr.block_bytes)};
  p.packed.resize(packed_bytes(t, rows, cols));
  pack_rows(p.w, p.packed.data());
  p.w.packed = p.packed.data();
  return p;
}

// n_tokens rows of random activations, quantized as Block.
template <typename Block>
std::vector<Block> quantized_activations(int64_t n_tokens, int64_t cols, std::mt19937& rng) {
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(n_tokens * cols));
  for (auto& v : x) v = d(rng);
  std::vector<Block> q(static_cast<size_t>(n_tokens * cols / 32));
  for (int64_t t = 0; t < n_tokens; ++t) {
    if constexpr (std::is_same_v<Block, Q8Block>)
      quantize_q8(&x[static_cast<size_t>(t * cols)], cols, &q[static_cast<size_t>(t * cols / 32)]);
    else
      quantize_q15(&x[static_cast<size_t>(t * cols)], cols, &q[static_cast<size_t>(t * cols / 32)]);
  }
  return q;
}

float value(const Q8Block& b, int j) { return static_cast<float>(b.q[j]) * b.d; }
float value(const Q15Block& b, int j) { return static_cast<float>(128 * b.hi[j] + b.lo[j]) * b.d; }

template <typename Block>
auto kernel(const KernelTable& kt, DType t) {
  if constexpr (std::is_same_v<Block, Q8Block>)
    return kt.packed_dot(t);
  else
    return kt.packed_dot15(t);
}

template <typename Block>
auto kernel16(const KernelTable& kt, DType t) {
  if constexpr (std::is_same_v<Block, Q8Block>)
    return kt.packed16(t);
  else
    return kt.packed16_15(t);
}

std::span<const KernelTable* const> simd_tables() { return simd_kernels(); }

}  // namespace

TEST(PackedKernels, DequantizeMatchesTheFileLayout) {
  std::mt19937 rng(11);
  for (DType t : kTypes)
    for (int64_t rows : {1, 7, 8, 13, 24})
      for (int64_t cols : widths(t, {32, 96, 576})) {
        Packed p = make(t, rows, cols, rng);
        std::vector<float> want(static_cast<size_t>(cols)), got(static_cast<size_t>(rows * cols));
        dequantize_packed(p.w, 0, rows, got.data());
        for (int64_t r = 0; r < rows; ++r) {
          dequantize_row(p.w, r, want.data());
          for (int64_t c = 0; c < cols; ++c)
            ASSERT_EQ(got[static_cast<size_t>(r * cols + c)], want[static_cast<size_t>(c)])
                << dtype_name(t) << " rows=" << rows << " r=" << r << " c=" << c;
        }
      }
}

template <typename Block>
void scalar_kernel_matches_float_dot() {
  std::mt19937 rng(12);
  for (DType t : kTypes)
    for (int64_t cols : widths(t, {32, 64, 96, 576, 1536})) {
      Packed p = make(t, 13, cols, rng);
      const int64_t nb = cols / 32;
      auto xq = quantized_activations<Block>(1, cols, rng);
      std::vector<float> x(static_cast<size_t>(cols)), w(static_cast<size_t>(cols));
      for (int64_t i = 0; i < cols; ++i) x[static_cast<size_t>(i)] = value(xq[static_cast<size_t>(i / 32)], i % 32);
      const size_t group_bytes = packed_group_bytes(t, cols);
      for (int64_t g = 0; g < 2; ++g) {
        float out[8];
        kernel<Block>(ref_kernels(), t)(p.packed.data() + g * group_bytes, xq.data(), nb, 1, out);
        for (int64_t r = 0; r < 8; ++r) {
          const int64_t row = g * 8 + r;
          if (row >= 13) {  // padding rows are zero
            EXPECT_EQ(out[r], 0.0f);
            continue;
          }
          dequantize_row(p.w, row, w.data());
          double want = 0, mag = 1e-6;
          for (int64_t i = 0; i < cols; ++i) {
            want += static_cast<double>(w[static_cast<size_t>(i)]) * x[static_cast<size_t>(i)];
            mag += std::fabs(static_cast<double>(w[static_cast<size_t>(i)]) * x[static_cast<size_t>(i)]);
          }
          EXPECT_NEAR(out[r], want, 1e-5 * mag) << dtype_name(t) << " cols=" << cols << " row=" << row;
        }
      }
    }
}

TEST(PackedKernels, ScalarKernelsMatchFloatDot) {
  scalar_kernel_matches_float_dot<Q8Block>();
  scalar_kernel_matches_float_dot<Q15Block>();
}

template <typename Block>
void simd_kernels_equal_scalar() {
  std::mt19937 rng(13);
  for (DType t : kTypes)
    for (int64_t cols : widths(t, {32, 64, 160, 576, 1536})) {
      Packed p = make(t, 8, cols, rng);
      const int64_t nb = cols / 32;
      auto xq = quantized_activations<Block>(kMaxMultiTokens, cols, rng);
      float want[kMaxMultiTokens * 8];
      for (int tok = 0; tok < kMaxMultiTokens; ++tok)
        kernel<Block>(ref_kernels(), t)(p.packed.data(), xq.data() + tok * nb, nb, 1, want + tok * 8);
      for (const KernelTable* kt : simd_tables())
        for (int n = 1; n <= kMaxMultiTokens; ++n) {
          float got[kMaxMultiTokens * 8];
          kernel<Block>(*kt, t)(p.packed.data(), xq.data(), nb, n, got);
          for (int i = 0; i < n * 8; ++i)
            ASSERT_EQ(got[i], want[i]) << kt->name << " " << dtype_name(t) << " cols=" << cols << " tokens=" << n
                                       << " out=" << i;
        }
    }
}

TEST(PackedKernels, SimdKernelsEqualScalarForAnyTokenCount) {
  if (simd_tables().empty()) GTEST_SKIP() << "no SIMD kernels for this CPU";
  simd_kernels_equal_scalar<Q8Block>();
  simd_kernels_equal_scalar<Q15Block>();
}

// The 16-row kernels (two consecutive groups) of the tables that have them: each half
// equals the scalar 8-row kernel on its group, bit for bit.
template <typename Block>
void sixteen_row_kernels_equal_scalar(const KernelTable& kt) {
  std::mt19937 rng(17);
  for (DType t : kTypes)
    for (int64_t cols : widths(t, {32, 64, 160, 576, 1536})) {
      Packed p = make(t, 16, cols, rng);
      const int64_t nb = cols / 32;
      const size_t group_bytes = packed_group_bytes(t, cols);
      auto xq = quantized_activations<Block>(kMaxMultiTokens16, cols, rng);
      float want[kMaxMultiTokens16 * 16];
      for (int tok = 0; tok < kMaxMultiTokens16; ++tok)
        for (int g = 0; g < 2; ++g)
          kernel<Block>(ref_kernels(), t)(p.packed.data() + g * group_bytes, xq.data() + tok * nb, nb, 1,
                                          want + tok * 16 + g * 8);
      const auto k16 = kernel16<Block>(kt, t);
      ASSERT_NE(k16, nullptr) << kt.name << " " << dtype_name(t);
      for (int n = 1; n <= kMaxMultiTokens16; ++n) {
        float got[kMaxMultiTokens16 * 16];
        k16(p.packed.data(), xq.data(), nb, n, got);
        for (int i = 0; i < n * 16; ++i)
          ASSERT_EQ(got[i], want[i]) << kt.name << " " << dtype_name(t) << " cols=" << cols << " tokens=" << n
                                     << " out=" << i;
      }
    }
}

TEST(PackedKernels, SixteenRowKernelsEqualScalar) {
  int tables = 0;
  for (const KernelTable* kt : simd_tables())
    if (kt->packed16) {
      sixteen_row_kernels_equal_scalar<Q8Block>(*kt);
      sixteen_row_kernels_equal_scalar<Q15Block>(*kt);
      ++tables;
    }
  if (tables == 0) GTEST_SKIP() << "no 16-row kernels for this CPU";
}

// The tile products (KernelTable::tiles, AMX) over whole matrices: every row and token
// equals the scalar 8-row kernel's, bit for bit, for row counts that end in a lone group
// or a partial task and token counts that end in a partial tile.
template <typename Block>
void tile_kernels_equal_scalar(const KernelTable& kt) {
  constexpr bool int8 = std::is_same_v<Block, Q8Block>;
  const PackedTiles& tiles = *kt.tiles;
  std::mt19937 rng(19);
  for (DType t : kTypes) {
    ASSERT_TRUE(tiles.supports(t)) << kt.name << " " << dtype_name(t);
    for (int64_t rows : {16, 24, 72})
      for (int64_t cols : widths(t, {32, 96, 576})) {
        Packed p = make(t, rows, cols, rng);
        const int64_t nb = cols / 32;
        const size_t group_bytes = packed_group_bytes(t, cols);
        for (int64_t toks : {16, 17, 40}) {
          auto xq = quantized_activations<Block>(toks, cols, rng);
          std::vector<float> want(static_cast<size_t>(toks * rows)), got(want.size(), -1.0f);
          for (int64_t tok = 0; tok < toks; ++tok)
            for (int64_t g = 0; g < (rows + 7) / 8; ++g) {
              float out[8];
              kernel<Block>(ref_kernels(), t)(p.packed.data() + g * group_bytes, xq.data() + tok * nb, nb, 1, out);
              for (int64_t r = 0; r < 8 && g * 8 + r < rows; ++r) want[static_cast<size_t>(tok * rows + g * 8 + r)] = out[r];
            }
          struct alignas(64) Line {
            uint8_t bytes[64];
          };
          std::vector<Line> lines(tiles.layout_bytes(toks, nb, int8) / sizeof(Line) + 1);
          uint8_t* layout = lines[0].bytes;
          for (int64_t tile = 0; tile < (toks + kTileTokens - 1) / kTileTokens; ++tile) {
            if constexpr (int8)
              tiles.lay_out8(xq.data(), toks, nb, tile, layout);
            else
              tiles.lay_out15(xq.data(), toks, nb, tile, layout);
          }
          for (int64_t r0 = 0; r0 < rows; r0 += 48)  // tasks of 48 rows: the last one partial
            (int8 ? tiles.rows8 : tiles.rows15)(p.w, r0, std::min<int64_t>(rows, r0 + 48), layout, toks, got.data());
          for (size_t i = 0; i < want.size(); ++i)
            ASSERT_EQ(got[i], want[i]) << kt.name << " " << dtype_name(t) << (int8 ? " int8" : " 15-bit")
                                       << " rows=" << rows << " cols=" << cols << " tokens=" << toks << " out=" << i;
        }
      }
  }
}

TEST(PackedKernels, TileKernelsEqualScalar) {
  int tables = 0;
  for (const KernelTable* kt : simd_tables())
    if (kt->tiles) {
      tile_kernels_equal_scalar<Q15Block>(*kt);
      tile_kernels_equal_scalar<Q8Block>(*kt);
      ++tables;
    }
  if (tables == 0) GTEST_SKIP() << "no tile kernels (AMX) for this CPU";
}

TEST(PackedKernels, Quantize15RoundTrips) {
  std::mt19937 rng(15);
  std::normal_distribution<float> d(0.0f, 3.0f);
  std::vector<float> x(96);
  for (auto& v : x) v = d(rng);
  for (int j = 64; j < 96; ++j) x[static_cast<size_t>(j)] = 0;  // an all-zero block
  std::vector<Q15Block> q(3);
  quantize_q15(x.data(), 96, q.data());
  for (int i = 0; i < 96; ++i) {
    const Q15Block& b = q[static_cast<size_t>(i / 32)];
    EXPECT_GE(b.lo[i % 32], 0);
    EXPECT_GE(b.hi[i % 32], -127);
    EXPECT_NEAR(value(b, i % 32), x[static_cast<size_t>(i)], b.d * 0.5f + 1e-7f);
  }
  EXPECT_EQ(q[2].d, 0.0f);
  EXPECT_EQ(q[2].s, 0.0f);
}

// matmul over packed views (decode and prompt rows alike) against the file layout's float
// path: within the rounding of the activations (half a step of each block's scale), and
// each token's numbers the same alone or batched.
TEST(PackedKernels, MatmulOverPackedRowsMatchesFileLayout) {
  std::mt19937 rng(14);
  ThreadPool pool(2);
  for (DType t : kTypes)
    for (int64_t rows : {5, 37, 64})
      for (bool int8 : {false, true}) {
        const int64_t cols = is_k(t) ? 512 : 96, nb = cols / 32;
        Packed p = make(t, rows, cols, rng);
        WeightView plain = p.w;
        plain.packed = nullptr;
        std::vector<float> deq(static_cast<size_t>(cols));
        for (int64_t toks : {1, 3, 6, 9}) {
          std::normal_distribution<float> d(0.0f, 1.0f);
          std::vector<float> x(static_cast<size_t>(toks * cols));
          for (auto& v : x) v = d(rng);
          std::vector<float> got(static_cast<size_t>(toks * rows)), want(got.size()), one(got.size());
          matmul(p.w, x.data(), toks, got.data(), pool, int8);
          matmul(plain, x.data(), toks, want.data(), pool);
          for (int64_t tt = 0; tt < toks; ++tt)
            matmul(p.w, x.data() + tt * cols, 1, one.data() + tt * rows, pool, int8);
          for (int64_t tt = 0; tt < toks; ++tt)
            for (int64_t r = 0; r < rows; ++r) {
              dequantize_row(plain, r, deq.data());
              double bound = 1e-6;
              for (int64_t b = 0; b < nb; ++b) {
                double amax = 0, wsum = 0;
                for (int j = 0; j < 32; ++j) {
                  amax = std::max(amax, std::fabs(static_cast<double>(x[static_cast<size_t>(tt * cols + b * 32 + j)])));
                  wsum += std::fabs(static_cast<double>(deq[static_cast<size_t>(b * 32 + j)]));
                }
                bound += 0.5 * amax / (int8 ? 127.0 : 16256.0) * 1.01 * wsum;
              }
              const size_t i = static_cast<size_t>(tt * rows + r);
              ASSERT_NEAR(got[i], want[i], bound) << dtype_name(t) << " rows=" << rows << " int8=" << int8 << " i=" << i;
              ASSERT_EQ(got[i], one[i]) << dtype_name(t) << " rows=" << rows << " i=" << i;
            }
        }
      }
}

TEST(PackedKernels, SimdQuantizeEqualsScalar) {
  if (simd_tables().empty()) GTEST_SKIP() << "no SIMD kernels for this CPU";
  std::mt19937 rng(16);
  for (float scale : {1e-3f, 1.0f, 300.0f}) {
    std::normal_distribution<float> d(0.0f, scale);
    std::vector<float> x(32 * 7);
    for (auto& v : x) v = d(rng);
    for (int j = 64; j < 96; ++j) x[static_cast<size_t>(j)] = 0;  // an all-zero block
    x[5] = 2.5f * scale;                                          // halfway cases round to even
    const int64_t k = static_cast<int64_t>(x.size()), nb = k / 32;
    std::vector<Q8Block> want8(static_cast<size_t>(nb)), got8(want8.size());
    std::vector<Q15Block> want15(static_cast<size_t>(nb)), got15(want15.size());
    quantize_q8(x.data(), k, want8.data());
    quantize_q15(x.data(), k, want15.data());
    for (const KernelTable* kt : simd_tables()) {
      kt->to_q8(x.data(), k, got8.data());
      kt->to_q15(x.data(), k, got15.data());
      for (int64_t b = 0; b < nb; ++b) {
        const size_t i = static_cast<size_t>(b);
        EXPECT_EQ(std::memcmp(&got8[i], &want8[i], sizeof(Q8Block)), 0) << kt->name << " q8 block " << b;
        EXPECT_EQ(std::memcmp(&got15[i], &want15[i], sizeof(Q15Block)), 0) << kt->name << " q15 block " << b;
      }
    }
  }
}
