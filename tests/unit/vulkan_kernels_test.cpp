// The Vulkan kernels against the CPU's scalar code, on whatever device the system has
// (CI: Mesa's lavapipe; vulkan_device.hpp says when they skip).
#if MINNOW_HAVE_VULKAN
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>
#include <tuple>
#include <vector>

#include "backends/vulkan/ops.hpp"
#include "base/error.hpp"
#include "kernels/ops.hpp"
#include "random_quants.hpp"
#include "vulkan_device.hpp"
#include "tensor/fp16.hpp"

using namespace minnow;
using namespace minnow::vulkan;

namespace {

#define NEED_DEVICE() MINNOW_NEED_VULKAN_DEVICE()

std::vector<uint8_t> random_rows(DType t, int64_t rows, int64_t cols, std::mt19937& rng) {
  if (t == DType::F32 || t == DType::F16 || t == DType::BF16) {
    std::normal_distribution<float> d(0.0f, 0.5f);
    std::vector<uint8_t> b(static_cast<size_t>(rows * cols) * (t == DType::F32 ? 4 : 2));
    for (int64_t i = 0; i < rows * cols; ++i) {
      const float v = d(rng);
      uint32_t bits;
      std::memcpy(&bits, &v, 4);
      if (t == DType::F32)
        std::memcpy(&b[static_cast<size_t>(i) * 4], &v, 4);
      else {
        const uint16_t h = t == DType::F16 ? fp32_to_fp16(v) : static_cast<uint16_t>(bits >> 16);  // bf16: truncated
        std::memcpy(&b[static_cast<size_t>(i) * 2], &h, 2);
      }
    }
    return b;
  }
  return test_util::random_matrix(t, rows, cols, rng);
}

std::vector<float> random_floats(size_t n, std::mt19937& rng, float sd = 1.0f) {
  std::normal_distribution<float> d(0.0f, sd);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

Buffer upload_floats(Device& dev, const std::vector<float>& v) {
  Buffer b = dev.alloc(v.size() * sizeof(float), Memory::Device);
  dev.upload(b, v.data(), v.size() * sizeof(float));
  return b;
}

std::vector<float> download_floats(Device& dev, const Buffer& b, size_t n) {
  std::vector<float> v(n);
  dev.download(b, v.data(), n * sizeof(float));
  return v;
}

// One matmul on the device against dequantize + dot in double on the CPU; with `fused`, a
// bias is added and the result accumulated into y's previous values.
void check_matmul(Device& dev, Ops& ops, DType t, int64_t rows, int64_t cols, int64_t n_tokens, std::mt19937& rng,
                  bool fused = false) {
  SCOPED_TRACE(std::string(dtype_name(t)) + " " + std::to_string(rows) + "x" + std::to_string(cols) + ", " +
               std::to_string(n_tokens) + " tokens" + (fused ? ", bias and residual" : ""));
  const DTypeTraits& tr = dtype_traits(t);
  const size_t row_bytes = static_cast<size_t>(cols / tr.block_size * tr.block_bytes);
  std::vector<uint8_t> w = random_rows(t, rows, cols, rng);
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(n_tokens * cols));
  for (float& v : x) v = d(rng);

  const kernels::WeightView view{t, w.data(), rows, cols, row_bytes};
  DeviceMatrix m = ops.upload(view);
  Buffer xb = upload_floats(dev, x);
  // The tensor cores multiply halves: weights and inputs each rounded to 11 bits.
  const double tolerance = ops.coopmat() && n_tokens >= 4 ? 2e-3 : 2e-5;
  std::vector<float> y0(static_cast<size_t>(n_tokens * rows), 0.0f), bias(static_cast<size_t>(rows), 0.0f);
  if (fused) y0 = random_floats(y0.size(), rng), bias = random_floats(bias.size(), rng);
  Buffer yb = upload_floats(dev, y0), bb = upload_floats(dev, bias);
  Stream s(dev);
  ops.matmul(s, m, xb, yb, n_tokens, fused ? &bb : nullptr, fused);
  s.submit_and_wait();
  const std::vector<float> y = download_floats(dev, yb, static_cast<size_t>(n_tokens * rows));

  std::vector<float> row(static_cast<size_t>(cols));
  int bad = 0;
  for (int64_t r = 0; r < rows; ++r) {
    tr.dequantize(w.data() + static_cast<size_t>(r) * row_bytes, row.data(), cols / tr.block_size);
    for (int64_t tok = 0; tok < n_tokens; ++tok) {
      double ref = y0[static_cast<size_t>(tok * rows + r)] + bias[static_cast<size_t>(r)], mag = std::fabs(ref);
      for (int64_t c = 0; c < cols; ++c) {
        const double p = static_cast<double>(row[static_cast<size_t>(c)]) * x[static_cast<size_t>(tok * cols + c)];
        ref += p;
        mag += std::fabs(p);
      }
      const double got = y[static_cast<size_t>(tok * rows + r)];
      if (!(std::fabs(got - ref) <= tolerance * mag + 1e-6) && bad++ < 5)
        ADD_FAILURE() << "row " << r << " token " << tok << ": " << got << " vs " << ref << " (|terms| " << mag << ")";
    }
  }
}

constexpr DType kMatmulTypes[] = {DType::F32,  DType::F16,  DType::BF16, DType::Q4_0, DType::Q4_1, DType::Q5_0,
                                  DType::Q5_1, DType::Q8_0, DType::Q4_K, DType::Q5_K, DType::Q6_K};

TEST(VulkanKernels, MatmulEveryTypeManyShapes) {
  NEED_DEVICE();
  Ops ops(*dev);
  ops.use_coopmat(false);  // the FP32 tiles every device runs; the tensor cores' test follows
  std::mt19937 rng(7);
  for (DType t : kMatmulTypes) {
    const bool k = test_util::is_k_quant(t);
    // Column counts that are not a multiple of the 64 threads' stride, row counts that are
    // not a multiple of anything.
    const std::vector<int64_t> widths = k ? std::vector<int64_t>{256, 768, 2304} : std::vector<int64_t>{32, 96, 800, 2080};
    for (int64_t cols : widths)
      for (int64_t rows : {1, 7, 67})
        for (int64_t n_tokens : {1, 3, 4, 17}) check_matmul(*dev, ops, t, rows, cols, n_tokens, rng);
    check_matmul(*dev, ops, t, 130, widths.back(), 45, rng, true);  // two tiles of rows and of tokens (narrow)
    ops.narrow_tiles_below(0);  // the wide tiles, which large matrices get
    check_matmul(*dev, ops, t, 130, widths.back(), 45, rng, true);
    check_matmul(*dev, ops, t, 67, widths.front(), 17, rng);
    ops.narrow_tiles_below(Ops::kWideTilesMin);
    check_matmul(*dev, ops, t, 67, widths.back(), 1, rng, true);
    // The matrix-vector kernel without subgroup operations, as on a device without them.
    ops.use_subgroups(false);
    for (int64_t cols : widths) check_matmul(*dev, ops, t, 67, cols, 2, rng, cols == widths.back());
    ops.use_subgroups(true);
    // 8 rows a workgroup, as matrices of many rows get (67: the last workgroup's rows cut).
    ops.wide_rows_from(0);
    for (bool subgroups : {true, false}) {
      ops.use_subgroups(subgroups);
      check_matmul(*dev, ops, t, 67, widths.back(), 1, rng, true);
      check_matmul(*dev, ops, t, 5, widths.front(), 3, rng);
    }
    ops.use_subgroups(true);
    ops.wide_rows_from(Ops::kWideRowsGroups);
    // 16 lanes a super-block (matvec_sb.comp, K-quants; the other types take units): widths
    // of one and of several blocks a slot, odd row counts, 32, 64 and 128 threads, 1, 2 and 8
    // rows a workgroup, with subgroups and through shared memory (128 threads: subgroups
    // only), the units kernel on K-quant rows, and the default's choice.
    for (Ops::Matvec m : {Ops::Matvec::Units, Ops::Matvec::Blocks, Ops::Matvec::Blocks32, Ops::Matvec::Blocks128,
                          Ops::Matvec::Auto}) {
      ops.use_matvec(m);
      for (bool subgroups : {true, false}) {
        ops.use_subgroups(subgroups);
        for (int64_t cols : widths)
          for (int64_t rows : {1, 7, 67}) check_matmul(*dev, ops, t, rows, cols, rows == 7 ? 3 : 1, rng, rows == 67);
        ops.wide_rows_from(0);
        check_matmul(*dev, ops, t, 67, widths.back(), 1, rng, true);
        ops.wide_rows_from(Ops::kWideRowsGroups);
      }
    }
    ops.use_subgroups(true);
    ops.use_matvec(Ops::Matvec::Auto);
  }
}

TEST(VulkanKernels, MatmulOnTensorCores) {
  NEED_DEVICE();
  if (!dev->info().nv_cooperative_matrix) GTEST_SKIP() << dev->info().name << " has no NV cooperative matrices";
  Ops ops(*dev);
  ASSERT_TRUE(ops.coopmat());
  std::mt19937 rng(11);
  for (DType t : kMatmulTypes) {
    const bool k = test_util::is_k_quant(t);
    // An odd number of units (the last step half empty), tiles of 64 and 128 rows and tokens cut.
    const std::vector<int64_t> widths = k ? std::vector<int64_t>{256, 2304} : std::vector<int64_t>{32, 96, 2080};
    for (Ops::CoopTiles tiles : {Ops::CoopTiles::Small, Ops::CoopTiles::Big}) {
      ops.use_coop_tiles(tiles);
      for (int64_t cols : widths)
        for (int64_t rows : {1, 67, 130, 259})
          for (int64_t n_tokens : {4, 17, 64, 130, 260}) check_matmul(*dev, ops, t, rows, cols, n_tokens, rng, rows == 67);
    }
  }
}

TEST(VulkanKernels, MatmulMoreRowsThanOneGridDimension) {
  NEED_DEVICE();
  Ops ops(*dev);
  std::mt19937 rng(8);
  check_matmul(*dev, ops, DType::Q8_0, 8 * 65535 + 77, 32, 1, rng);
}

// Each value within rel of its own size, or (normwise) of the largest value's.
void expect_close(const std::vector<float>& got, const std::vector<float>& want, float rel, const char* what,
                  bool normwise = false) {
  ASSERT_EQ(got.size(), want.size());
  float largest = 0;
  for (float v : want) largest = std::max(largest, std::fabs(v));
  int bad = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (!(std::fabs(got[i] - want[i]) <= rel * (1.0f + (normwise ? largest : std::fabs(want[i])))) && bad++ < 5)
      ADD_FAILURE() << what << "[" << i << "]: " << got[i] << " vs " << want[i];
}

// Matrix-vector variant 0-5 (kernel kind: units, super-blocks of 64 or 32 threads; each with
// and without subgroups), grids capped at `cap` workgroups (0: none); what it picked, for traces.
std::string use_matvec_variant(Ops& ops, int variant, int64_t cap) {
  const bool subgroups = variant % 2 == 0;
  ops.use_subgroups(subgroups);
  ops.use_matvec(variant < 2 ? Ops::Matvec::Units : variant < 4 ? Ops::Matvec::Blocks : Ops::Matvec::Blocks32);
  ops.cap_matvec_groups(cap);
  return std::string(subgroups ? "" : ", no subgroups") + ", matvec kind " + std::to_string(variant / 2) +
         (cap > 0 ? ", grid capped at " + std::to_string(cap) : "");
}

// An RMSNorm folded into the matrix-vector kernels (decode) against the norm's own kernel
// followed by the product (each checked against the CPU above and below).
TEST(VulkanKernels, NormFoldedIntoProductsMatchesNormThenProduct) {
  NEED_DEVICE();
  Ops ops(*dev);
  std::mt19937 rng(21);
  for (DType t : {DType::F16, DType::Q4_0, DType::Q8_0, DType::Q4_K, DType::Q6_K})
    for (int64_t cols : {256, 2304})
      for (int64_t n_tokens : {1, 3})
        for (int variant = 0; variant < 6; ++variant) {
          SCOPED_TRACE(std::string(dtype_name(t)) + " " + std::to_string(cols) + " columns, " + std::to_string(n_tokens) +
                       " tokens" + use_matvec_variant(ops, variant, variant % 3 == 1 ? 5 : 0));
          const int64_t rows = 67, ff = 37;
          const DTypeTraits& tr = dtype_traits(t);
          const size_t row_bytes = static_cast<size_t>(cols / tr.block_size * tr.block_bytes);
          std::vector<uint8_t> w = random_rows(t, rows, cols, rng), g = random_rows(t, ff, cols, rng), u = random_rows(t, ff, cols, rng);
          DeviceMatrix m = ops.upload({t, w.data(), rows, cols, row_bytes});
          DeviceMatrix gu = ops.upload_stacked({t, g.data(), ff, cols, row_bytes}, {t, u.data(), ff, cols, row_bytes});
          std::vector<float> gain = random_floats(static_cast<size_t>(cols), rng);
          const std::vector<float> x = random_floats(static_cast<size_t>(n_tokens * cols), rng, 3.0f);
          Buffer xb = upload_floats(*dev, x), gb = upload_floats(*dev, gain), hb = dev->alloc(x.size() * 4, Memory::Device);
          Buffer y_fold = dev->alloc(static_cast<size_t>(n_tokens * rows) * 4, Memory::Device), y_ref = dev->alloc(y_fold.size(), Memory::Device);
          Buffer a_fold = dev->alloc(static_cast<size_t>(n_tokens * ff) * 4, Memory::Device), a_ref = dev->alloc(a_fold.size(), Memory::Device);
          Buffer scratch = dev->alloc(a_fold.size() * 2, Memory::Device);
          const Ops::InputNorm norm{&gb, 1e-5f};
          Stream s(*dev);
          ops.matmul(s, m, xb, y_fold, n_tokens, nullptr, false, &norm);
          ops.glu_matmul(s, gu, xb, a_fold, scratch, n_tokens, false, &norm);
          ops.rmsnorm(s, xb, gb, hb, n_tokens, cols, 1e-5f);
          s.barrier();
          ops.matmul(s, m, hb, y_ref, n_tokens);
          ops.glu_matmul(s, gu, hb, a_ref, scratch, n_tokens, false);
          s.submit_and_wait();
          expect_close(download_floats(*dev, y_fold, static_cast<size_t>(n_tokens * rows)),
                       download_floats(*dev, y_ref, static_cast<size_t>(n_tokens * rows)), 1e-3f, "matvec with the norm");
          expect_close(download_floats(*dev, a_fold, static_cast<size_t>(n_tokens * ff)),
                       download_floats(*dev, a_ref, static_cast<size_t>(n_tokens * ff)), 1e-3f, "GLU matvec with the norm",
                       true);  // act(gate) * up: a small result of large factors carries their rounding
        }
  Buffer g = dev->alloc(64, Memory::Device), x = dev->alloc(4096, Memory::Device), y = dev->alloc(4096, Memory::Device);
  std::vector<uint8_t> w = random_rows(DType::Q8_0, 2, 32, rng);
  DeviceMatrix m = ops.upload({DType::Q8_0, w.data(), 2, 32, 34});
  const Ops::InputNorm norm{&g, 1e-5f};
  Stream s(*dev);
  EXPECT_THROW(ops.matmul(s, m, x, y, 8, nullptr, false, &norm), Error);  // the tiled kernels do not fold it
}

// A post-norm and its residual add folded into the next products' input (Gemma 3's decode)
// against the norm's own pass adding into x, then the norm and the products; x + post-norm
// comes back in x_out.
TEST(VulkanKernels, PostNormFoldedIntoProductsMatchesAddThenProduct) {
  NEED_DEVICE();
  Ops ops(*dev);
  std::mt19937 rng(22);
  const float eps = 1e-6f;
  for (DType t : {DType::F16, DType::Q4_0, DType::Q4_K, DType::Q6_K})
    for (int64_t cols : {256, 2304})
      for (int64_t n_tokens : {1, 3})
        for (int variant = 0; variant < 6; ++variant) {
          SCOPED_TRACE(std::string(dtype_name(t)) + " " + std::to_string(cols) + " columns, " + std::to_string(n_tokens) +
                       " tokens" + use_matvec_variant(ops, variant, variant % 3 == 0 ? 3 : 0));
          const int64_t rows = 45, ff = 29;
          const size_t n = static_cast<size_t>(n_tokens * cols);
          const DTypeTraits& tr = dtype_traits(t);
          const size_t row_bytes = static_cast<size_t>(cols / tr.block_size * tr.block_bytes);
          std::vector<uint8_t> w = random_rows(t, rows, cols, rng), g = random_rows(t, ff, cols, rng), u = random_rows(t, ff, cols, rng);
          DeviceMatrix m = ops.upload({t, w.data(), rows, cols, row_bytes});
          DeviceMatrix gu = ops.upload_stacked({t, g.data(), ff, cols, row_bytes}, {t, u.data(), ff, cols, row_bytes});
          const std::vector<float> x = random_floats(n, rng, 3.0f), res = random_floats(n, rng, 20.0f);
          Buffer xb = upload_floats(*dev, x), x_ref = upload_floats(*dev, x), rb = upload_floats(*dev, res);
          Buffer gb = upload_floats(*dev, random_floats(static_cast<size_t>(cols), rng));
          Buffer pb = upload_floats(*dev, random_floats(static_cast<size_t>(cols), rng));
          Buffer x_out = dev->alloc(n * 4, Memory::Device), x_out2 = dev->alloc(n * 4, Memory::Device), hb = dev->alloc(n * 4, Memory::Device);
          Buffer y_fold = dev->alloc(static_cast<size_t>(n_tokens * rows) * 4, Memory::Device), y_ref = dev->alloc(y_fold.size(), Memory::Device);
          Buffer a_fold = dev->alloc(static_cast<size_t>(n_tokens * ff) * 4, Memory::Device), a_ref = dev->alloc(a_fold.size(), Memory::Device);
          Buffer scratch = dev->alloc(a_fold.size() * 2, Memory::Device);
          Stream s(*dev);
          const Ops::InputNorm fold{&gb, eps, &rb, &pb, &x_out}, fold2{&gb, eps, &rb, &pb, &x_out2};
          ops.matmul(s, m, xb, y_fold, n_tokens, nullptr, false, &fold);
          ops.glu_matmul(s, gu, xb, a_fold, scratch, n_tokens, true, &fold2);
          ops.rmsnorm(s, rb, pb, x_ref, n_tokens, cols, eps, 0, true);
          s.barrier();
          ops.rmsnorm(s, x_ref, gb, hb, n_tokens, cols, eps);
          s.barrier();
          ops.matmul(s, m, hb, y_ref, n_tokens);
          ops.glu_matmul(s, gu, hb, a_ref, scratch, n_tokens, true);
          s.submit_and_wait();
          const std::vector<float> sum = download_floats(*dev, x_ref, n);
          expect_close(download_floats(*dev, x_out, n), sum, 1e-5f, "x + post-norm written by the matvec");
          expect_close(download_floats(*dev, x_out2, n), sum, 1e-5f, "x + post-norm written by the GLU matvec");
          expect_close(download_floats(*dev, y_fold, static_cast<size_t>(n_tokens * rows)),
                       download_floats(*dev, y_ref, static_cast<size_t>(n_tokens * rows)), 1e-3f, "matvec after the post-norm");
          expect_close(download_floats(*dev, a_fold, static_cast<size_t>(n_tokens * ff)),
                       download_floats(*dev, a_ref, static_cast<size_t>(n_tokens * ff)), 1e-3f, "GLU matvec after the post-norm",
                       true);
        }
  ops.cap_matvec_groups(0);
  Buffer b = dev->alloc(4096, Memory::Device), x = dev->alloc(4096, Memory::Device), y = dev->alloc(4096, Memory::Device);
  std::vector<uint8_t> w = random_rows(DType::Q8_0, 2, 32, rng);
  DeviceMatrix m = ops.upload({DType::Q8_0, w.data(), 2, 32, 34});
  const Ops::InputNorm into_x{&b, 1e-5f, &b, &b, &x};  // x_out must not be the input
  Stream s(*dev);
  EXPECT_THROW(ops.matmul(s, m, x, y, 1, nullptr, false, &into_x), Error);
}

// A stacked q / k / v projection written to three (or two) outputs in one pass against
// each matrix alone, for the matrix-vector, tiled and (where the device has them) tensor-core
// kernels.
TEST(VulkanKernels, StackedProjectionSplitsIntoItsOutputs) {
  NEED_DEVICE();
  Ops ops(*dev);
  std::mt19937 rng(23);
  const int64_t cols = 256, nq = 96, nk = 32, nv = 32;
  for (DType t : {DType::Q4_K, DType::Q8_0})
    for (bool with_v : {true, false})
      for (int64_t n_tokens : {1, 3, 17, 70, -1, -3}) {  // -n: n tokens, 16 lanes a super-block (matvec_sb.comp)
        ops.use_matvec(n_tokens < 0 ? Ops::Matvec::Blocks : Ops::Matvec::Units);
        n_tokens = std::abs(n_tokens);
        SCOPED_TRACE(std::string(dtype_name(t)) + (with_v ? ", q/k/v" : ", q/k") + ", " + std::to_string(n_tokens) + " tokens");
        const DTypeTraits& tr = dtype_traits(t);
        const size_t row_bytes = static_cast<size_t>(cols / tr.block_size * tr.block_bytes);
        std::vector<uint8_t> wq = random_rows(t, nq, cols, rng), wk = random_rows(t, nk, cols, rng), wv = random_rows(t, nv, cols, rng);
        const kernels::WeightView q{t, wq.data(), nq, cols, row_bytes}, k{t, wk.data(), nk, cols, row_bytes},
            v{t, wv.data(), nv, cols, row_bytes};
        DeviceMatrix stacked = with_v ? ops.upload_stacked({q, k, v}) : ops.upload_stacked({q, k});
        DeviceMatrix mq = ops.upload(q), mk = ops.upload(k), mv = ops.upload(v);
        const int64_t rows = stacked.rows;
        std::vector<float> b = random_floats(static_cast<size_t>(rows), rng), gain = random_floats(static_cast<size_t>(cols), rng);
        Buffer bias = upload_floats(*dev, b), gb = upload_floats(*dev, gain);
        Buffer bq = upload_floats(*dev, std::vector<float>(b.begin(), b.begin() + nq));
        Buffer bk = upload_floats(*dev, std::vector<float>(b.begin() + nq, b.begin() + nq + nk));
        Buffer bv = with_v ? upload_floats(*dev, std::vector<float>(b.begin() + nq + nk, b.end())) : Buffer{};
        Buffer xb = upload_floats(*dev, random_floats(static_cast<size_t>(n_tokens * cols), rng));
        auto out = [&](int64_t r) { return dev->alloc(static_cast<size_t>(n_tokens * r) * 4, Memory::Device); };
        Buffer yq = out(nq), yk = out(nk), yv = out(nv), rq = out(nq), rk = out(nk), rv = out(nv);
        const Ops::InputNorm norm{&gb, 1e-5f};
        const Ops::InputNorm* folded = Ops::folds_norm(n_tokens) ? &norm : nullptr;
        Stream s(*dev);
        ops.matmul_split(s, stacked, xb, yq, yk, with_v ? &yv : nullptr, nq, with_v ? nq + nk : rows, n_tokens, &bias, folded);
        ops.matmul(s, mq, xb, rq, n_tokens, &bq, false, folded);
        ops.matmul(s, mk, xb, rk, n_tokens, &bk, false, folded);
        if (with_v) ops.matmul(s, mv, xb, rv, n_tokens, &bv, false, folded);
        s.submit_and_wait();
        for (auto [got, want, r] : {std::tuple{&yq, &rq, nq}, std::tuple{&yk, &rk, nk}, std::tuple{&yv, &rv, with_v ? nv : 0}})
          if (r != 0)
            expect_close(download_floats(*dev, *got, static_cast<size_t>(n_tokens * r)),
                         download_floats(*dev, *want, static_cast<size_t>(n_tokens * r)), 1e-5f, "split output");
      }
  Stream s(*dev);
  std::vector<uint8_t> w = random_rows(DType::Q8_0, 4, 32, rng);
  DeviceMatrix m = ops.upload({DType::Q8_0, w.data(), 4, 32, 34});
  Buffer x = dev->alloc(4096, Memory::Device), y = dev->alloc(4096, Memory::Device), y2 = dev->alloc(4096, Memory::Device);
  EXPECT_THROW(ops.matmul_split(s, m, x, y, y2, nullptr, 3, 2, 1), Error);  // rows that do not split
}

TEST(VulkanKernels, RmsNormMatchesScalar) {
  NEED_DEVICE();
  Ops ops(*dev);
  std::mt19937 rng(9);
  std::normal_distribution<float> d(0.0f, 2.0f);
  for (int64_t dim : {1, 63, 576, 1537})
    for (int64_t rows : {1, 5}) {
      std::vector<float> x(static_cast<size_t>(rows * dim)), g(static_cast<size_t>(dim)), ref(x.size());
      for (float& v : x) v = d(rng);
      for (float& v : g) v = d(rng);
      kernels::ref_kernels().rmsnorm(x.data(), g.data(), ref.data(), rows, dim, 1e-6f);
      Buffer xb = upload_floats(*dev, x), gb = upload_floats(*dev, g);
      Buffer yb = dev->alloc(x.size() * sizeof(float), Memory::Readback);
      for (bool subgroups : {true, false}) {
        ops.use_subgroups(subgroups);
        Stream s(*dev);
        ops.rmsnorm(s, xb, gb, yb, rows, dim, 1e-6f);
        s.submit_and_wait();
        expect_close(download_floats(*dev, yb, x.size()), ref, 1e-5f, subgroups ? "rmsnorm" : "rmsnorm without subgroups");
      }
      ops.use_subgroups(true);
      // Accumulated into a residual: y = x + norm(x) * g (a post-norm added in the same pass).
      Buffer acc = upload_floats(*dev, x);
      Stream s(*dev);
      ops.rmsnorm(s, xb, gb, acc, rows, dim, 1e-6f, 0, true);
      s.submit_and_wait();
      std::vector<float> want(x.size());
      for (size_t i = 0; i < x.size(); ++i) want[i] = x[i] + ref[i];
      expect_close(download_floats(*dev, acc, x.size()), want, 1e-5f, "rmsnorm accumulated");
    }
}

// Dispatches in one stream, separated by barriers, see each other's results: norm, then
// a matmul of the normed rows, then a second matmul of that, submitted once.
TEST(VulkanKernels, OneStreamChainsDispatches) {
  NEED_DEVICE();
  Ops ops(*dev);
  std::mt19937 rng(10);
  const int64_t dim = 96, hidden = 64, tokens = 2;
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(tokens * dim)), g(static_cast<size_t>(dim));
  for (float& v : x) v = d(rng);
  for (float& v : g) v = 1.0f + 0.1f * d(rng);
  std::vector<uint8_t> w1 = test_util::random_matrix(DType::Q8_0, hidden, dim, rng);
  std::vector<uint8_t> w2 = test_util::random_matrix(DType::Q4_0, dim, hidden, rng);
  const kernels::WeightView v1{DType::Q8_0, w1.data(), hidden, dim, static_cast<size_t>(dim / 32 * 34)};
  const kernels::WeightView v2{DType::Q4_0, w2.data(), dim, hidden, static_cast<size_t>(hidden / 32 * 18)};

  // CPU: the scalar kernels.
  std::vector<float> n(x.size()), h(static_cast<size_t>(tokens * hidden)), out(x.size()), row(static_cast<size_t>(dim));
  kernels::ref_kernels().rmsnorm(x.data(), g.data(), n.data(), tokens, dim, 1e-5f);
  for (int64_t t = 0; t < tokens; ++t)
    for (int64_t r = 0; r < hidden; ++r) {
      kernels::dequantize_row(v1, r, row.data());
      double s = 0;
      for (int64_t c = 0; c < dim; ++c) s += static_cast<double>(row[static_cast<size_t>(c)]) * n[static_cast<size_t>(t * dim + c)];
      h[static_cast<size_t>(t * hidden + r)] = static_cast<float>(s);
    }
  for (int64_t t = 0; t < tokens; ++t)
    for (int64_t r = 0; r < dim; ++r) {
      kernels::dequantize_row(v2, r, row.data());
      double s = 0;
      for (int64_t c = 0; c < hidden; ++c) s += static_cast<double>(row[static_cast<size_t>(c)]) * h[static_cast<size_t>(t * hidden + c)];
      out[static_cast<size_t>(t * dim + r)] = static_cast<float>(s);
    }

  DeviceMatrix m1 = ops.upload(v1), m2 = ops.upload(v2);
  Buffer xb = upload_floats(*dev, x), gb = upload_floats(*dev, g);
  Buffer nb = dev->alloc(x.size() * 4, Memory::Device), hb = dev->alloc(h.size() * 4, Memory::Device);
  Buffer yb = dev->alloc(x.size() * 4, Memory::Readback);
  Stream s(*dev);
  ops.rmsnorm(s, xb, gb, nb, tokens, dim, 1e-5f);
  s.barrier();
  ops.matmul(s, m1, nb, hb, tokens);
  s.barrier();
  ops.matmul(s, m2, hb, yb, tokens);
  s.submit_and_wait();
  const std::vector<float> y = download_floats(*dev, yb, x.size());
  for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], out[i], 1e-3f * (1.0f + std::fabs(out[i]))) << i;
}



TEST(VulkanKernels, AddAndGluMatchScalar) {
  NEED_DEVICE();
  Ops ops(*dev);
  std::mt19937 rng(11);
  for (int64_t n : {1, 255, 256, 1000, 70001}) {
    const int64_t period = n % 7 == 0 ? n : std::max<int64_t>(1, n / 5);
    std::vector<float> y = random_floats(static_cast<size_t>(n), rng), b = random_floats(static_cast<size_t>(period), rng);
    std::vector<float> want = y;
    for (int64_t i = 0; i < n; ++i) want[static_cast<size_t>(i)] += b[static_cast<size_t>(i % period)];
    Buffer yb = upload_floats(*dev, y), bb = upload_floats(*dev, b);
    Stream s(*dev);
    ops.add(s, yb, bb, n, period);
    s.submit_and_wait();
    expect_close(download_floats(*dev, yb, y.size()), want, 1e-6f, "add");

    for (bool gelu : {false, true}) {
      std::vector<float> g = random_floats(static_cast<size_t>(n), rng, 4.0f), u = random_floats(static_cast<size_t>(n), rng);
      std::vector<float> ref(g.size());
      (gelu ? kernels::ref_kernels().glu_gelu_tanh : kernels::ref_kernels().glu_silu)(g.data(), u.data(), ref.data(), n);
      Buffer gb = upload_floats(*dev, g), ub = upload_floats(*dev, u);
      Stream s2(*dev);
      ops.glu(s2, gb, ub, gb, 1, n, n, 0, gelu);
      s2.submit_and_wait();
      expect_close(download_floats(*dev, gb, g.size()), ref, 2e-6f, gelu ? "geglu" : "swiglu");
    }
  }
}

// The FFN's first half, act(gate . x) * (up . x), from the two matrices stacked: the
// one-pass kernel for a few tokens (with and without subgroups) and matmul + glu for more.
TEST(VulkanKernels, GluMatmulMatchesGateAndUp) {
  NEED_DEVICE();
  Ops ops(*dev);
  // The check is relative to the result, which cancellation makes small next to its terms:
  // the FP32 tiles here (MatmulOnTensorCores checks the halves relative to the terms).
  ops.use_coopmat(false);
  std::mt19937 rng(17);
  for (DType t : {DType::Q4_0, DType::Q8_0, DType::Q4_K, DType::Q6_K}) {
    const int64_t ff = 37, cols = 512;
    const DTypeTraits& tr = dtype_traits(t);
    const size_t row_bytes = static_cast<size_t>(cols / tr.block_size * tr.block_bytes);
    std::vector<uint8_t> g = random_rows(t, ff, cols, rng), u = random_rows(t, ff, cols, rng);
    DeviceMatrix gu = ops.upload_stacked({t, g.data(), ff, cols, row_bytes}, {t, u.data(), ff, cols, row_bytes});
    for (int64_t n_tokens : {1, 2, 5})
      for (bool gelu : {false, true})
        for (int variant = 0; variant < 8; ++variant) {
          // wide: 4 rows of each matrix a workgroup; blocks: 16 lanes a super-block (matvec_sb.comp)
          const bool subgroups = variant != 1 && variant != 4, wide = variant == 2 || variant >= 5, blocks = variant >= 3;
          SCOPED_TRACE(std::string(dtype_name(t)) + ", " + std::to_string(n_tokens) + " tokens" + (gelu ? ", gelu" : ", silu") +
                       (subgroups ? "" : ", no subgroups") + (wide ? ", wide" : "") + (blocks ? ", blocks" : "") +
                       (variant == 6 ? ", 32 threads" : variant == 7 ? ", 128 threads" : ""));
          ops.use_subgroups(subgroups);
          ops.wide_rows_from(wide ? 0 : Ops::kWideRowsGroups);
          ops.use_matvec(!blocks                ? Ops::Matvec::Units
                         : variant == 6 ? Ops::Matvec::Blocks32
                         : variant == 7 ? Ops::Matvec::Blocks128
                                        : Ops::Matvec::Blocks);
          // Inputs scaled so the products are near 1: the check is relative to the result.
          const std::vector<float> x = random_floats(static_cast<size_t>(n_tokens * cols), rng, 1.0f / std::sqrt(float(cols)));
          std::vector<float> gate(static_cast<size_t>(n_tokens * ff)), up(gate.size()), want(gate.size()), row(static_cast<size_t>(cols));
          for (int64_t r = 0; r < ff; ++r)
            for (const auto& [w, out] : {std::pair{&g, &gate}, std::pair{&u, &up}}) {
              tr.dequantize(w->data() + static_cast<size_t>(r) * row_bytes, row.data(), cols / tr.block_size);
              for (int64_t k = 0; k < n_tokens; ++k) {
                double dot = 0;
                for (int64_t c = 0; c < cols; ++c) dot += static_cast<double>(row[static_cast<size_t>(c)]) * x[static_cast<size_t>(k * cols + c)];
                (*out)[static_cast<size_t>(k * ff + r)] = static_cast<float>(dot);
              }
            }
          (gelu ? kernels::ref_kernels().glu_gelu_tanh : kernels::ref_kernels().glu_silu)(gate.data(), up.data(), want.data(),
                                                                                       static_cast<int64_t>(gate.size()));
          Buffer xb = upload_floats(*dev, x), out = dev->alloc(want.size() * 4, Memory::Device);
          Buffer scratch = dev->alloc(want.size() * 8, Memory::Device);
          Stream s(*dev);
          ops.glu_matmul(s, gu, xb, out, scratch, n_tokens, gelu);
          s.submit_and_wait();
          expect_close(download_floats(*dev, out, want.size()), want, 1e-4f, "glu matmul");
        }
    ops.use_subgroups(true);
  }
}

// Angle tables for tokens at the given positions, as the CPU's transformer makes them.
void angle_tables(const std::vector<uint32_t>& pos, int64_t hd, std::vector<float>& cs, std::vector<float>& sn) {
  const int64_t half = hd / 2;
  cs.assign(pos.size() * static_cast<size_t>(half), 0.0f);
  sn = cs;
  for (size_t t = 0; t < pos.size(); ++t)
    for (int64_t i = 0; i < half; ++i) {
      const float inv = std::pow(10000.0f, -2.0f * static_cast<float>(i) / static_cast<float>(hd));
      const float a = static_cast<float>(pos[t]) * inv;
      cs[t * static_cast<size_t>(half) + static_cast<size_t>(i)] = std::cos(a);
      sn[t * static_cast<size_t>(half) + static_cast<size_t>(i)] = std::sin(a);
    }
}

Buffer upload_words(Device& dev, const std::vector<uint32_t>& v) {
  Buffer b = dev.alloc(v.size() * 4, Memory::Device);
  dev.upload(b, v.data(), v.size() * 4);
  return b;
}

TEST(VulkanKernels, RopeAndKvStoreMatchScalar) {
  NEED_DEVICE();
  Ops ops(*dev);
  std::mt19937 rng(12);
  const kernels::KernelTable& ref = kernels::ref_kernels();
  for (bool half_split : {false, true})
    for (int64_t hd : {2, 64, 80, 128})
      for (int64_t heads : {1, 3}) {
        SCOPED_TRACE("hd " + std::to_string(hd) + " heads " + std::to_string(heads) + (half_split ? " neox" : ""));
        const std::vector<uint32_t> pos = {0, 5, 6, 17};
        const int64_t n = static_cast<int64_t>(pos.size()), row = heads * hd, half = hd / 2;
        std::vector<float> cs, sn;
        angle_tables(pos, hd, cs, sn);
        Buffer cb = upload_floats(*dev, cs), sb = upload_floats(*dev, sn);

        // The cache write, at layer 1 of 2 with room for 20 positions.
        const Ops::KvLayout kv{heads, hd, 20};
        std::vector<float> k = random_floats(static_cast<size_t>(n * row), rng), v = random_floats(static_cast<size_t>(n * row), rng);
        std::vector<uint16_t> kc(static_cast<size_t>(2 * 20 * row)), vc(kc.size());
        for (int64_t t = 0; t < n; ++t) {
          const size_t at = static_cast<size_t>((20 + pos[static_cast<size_t>(t)]) * row);
          ref.rope_store_kv_f16(&k[static_cast<size_t>(t * row)], &v[static_cast<size_t>(t * row)], heads, hd,
                                &cs[static_cast<size_t>(t * half)], &sn[static_cast<size_t>(t * half)], half_split,
                                &kc[at], &vc[at]);
        }
        Buffer kb = upload_floats(*dev, k), vb = upload_floats(*dev, v), pb = upload_words(*dev, pos);
        Buffer kcb = dev->alloc(kc.size() * 2, Memory::Device), vcb = dev->alloc(vc.size() * 2, Memory::Device);
        const std::vector<uint16_t> zeros(kc.size(), 0);
        dev->upload(kcb, zeros.data(), zeros.size() * 2);
        dev->upload(vcb, zeros.data(), zeros.size() * 2);
        // Twice as many query heads, rotated in place by the same dispatch.
        const int64_t q_row = 2 * row;
        std::vector<float> q = random_floats(static_cast<size_t>(n * q_row), rng), q_want = q;
        for (int64_t t = 0; t < n; ++t)
          ref.rope(&q_want[static_cast<size_t>(t * q_row)], 2 * heads, hd, &cs[static_cast<size_t>(t * half)],
                   &sn[static_cast<size_t>(t * half)], half_split);
        Buffer qb = upload_floats(*dev, q);
        Stream s2(*dev);
        ops.store_kv(s2, kb, vb, cb, sb, pb, kcb, vcb, kv, 1, n, half_split, &qb, 2 * heads);
        s2.submit_and_wait();
        expect_close(download_floats(*dev, qb, q.size()), q_want, 1e-5f, "queries rotated by store_kv");
        std::vector<uint16_t> kg(kc.size()), vg(vc.size());
        dev->download(kcb, kg.data(), kg.size() * 2);
        dev->download(vcb, vg.data(), vg.size() * 2);
        std::vector<float> kgf(kg.size()), kcf(kc.size()), vgf(vg.size()), vcf(vc.size());
        for (size_t i = 0; i < kg.size(); ++i) {
          kgf[i] = fp16_to_fp32(kg[i]), kcf[i] = fp16_to_fp32(kc[i]);
          vgf[i] = fp16_to_fp32(vg[i]), vcf[i] = fp16_to_fp32(vc[i]);
        }
        expect_close(kgf, kcf, 1e-3f, "k cache");  // one f16 rounding step at most
        expect_close(vgf, vcf, 0.0f, "v cache");
      }
}

// Attention over an f16 cache against softmax(q k / sqrt(hd)) v in double, with grouped
// heads, a sliding window and soft-capping, for queries at positions `pos`.
struct AttentionCase {
  int64_t n_heads, n_kv_heads, hd, positions;
  int window;
  float softcap;
};

void check_attention(Device& dev, Ops& ops, const AttentionCase& c, const std::vector<uint32_t>& pos, std::mt19937& rng) {
  const int64_t n = static_cast<int64_t>(pos.size());
  SCOPED_TRACE("heads " + std::to_string(c.n_heads) + "/" + std::to_string(c.n_kv_heads) + " hd " + std::to_string(c.hd) +
               " positions " + std::to_string(c.positions) + ", " + std::to_string(n) + " queries");
  const int64_t kvd = c.n_kv_heads * c.hd, layers = 2, layer = 1;
  const Ops::KvLayout kv{c.n_kv_heads, c.hd, c.positions + 3};
  std::vector<uint16_t> kc(static_cast<size_t>(layers * kv.capacity * kvd)), vc(kc.size());
  std::normal_distribution<float> d(0.0f, 1.0f);
  for (size_t i = 0; i < kc.size(); ++i) kc[i] = fp32_to_fp16(d(rng)), vc[i] = fp32_to_fp16(d(rng));
  std::vector<float> q = random_floats(static_cast<size_t>(n * c.n_heads * c.hd), rng);
  const float scale = 1.0f / std::sqrt(static_cast<float>(c.hd));
  std::vector<float> want(q.size());
  for (int64_t t = 0; t < n; ++t)
    for (int64_t h = 0; h < c.n_heads; ++h) {
      const int64_t kvh = h / (c.n_heads / c.n_kv_heads), last = pos[static_cast<size_t>(t)];
      const int64_t first = c.window > 0 ? std::max<int64_t>(0, last + 1 - c.window) : 0;
      std::vector<double> sc;
      double mx = -1e300;
      for (int64_t j = first; j <= last; ++j) {
        double dot = 0;
        const size_t row = static_cast<size_t>((layer * kv.capacity + j) * kvd + kvh * c.hd);
        for (int64_t i = 0; i < c.hd; ++i)
          dot += static_cast<double>(q[static_cast<size_t>((t * c.n_heads + h) * c.hd + i)]) * fp16_to_fp32(kc[row + static_cast<size_t>(i)]);
        double x = dot * scale;
        if (c.softcap > 0) x = c.softcap * std::tanh(x / c.softcap);
        sc.push_back(x);
        mx = std::max(mx, x);
      }
      double sum = 0;
      for (double& x : sc) sum += (x = std::exp(x - mx));
      for (int64_t i = 0; i < c.hd; ++i) {
        double o = 0;
        for (int64_t j = first; j <= last; ++j)
          o += sc[static_cast<size_t>(j - first)] *
               fp16_to_fp32(vc[static_cast<size_t>((layer * kv.capacity + j) * kvd + kvh * c.hd + i)]);
        want[static_cast<size_t>((t * c.n_heads + h) * c.hd + i)] = static_cast<float>(o / sum);
      }
    }
  Buffer qb = upload_floats(dev, q), pb = upload_words(dev, pos);
  Buffer kcb = ops.kv_cache(kv, layers), vcb = ops.kv_cache(kv, layers);
  dev.upload(kcb, kc.data(), kc.size() * 2);
  dev.upload(vcb, vc.data(), vc.size() * 2);
  Buffer ob = dev.alloc(q.size() * 4, Memory::Readback);
  Buffer part = ops.attention_part(kv, c.n_heads, n);
  // The reductions with and without subgroup operations, then (where the device has them
  // and the prompt takes them) on the tensor cores: queries and weights in halves.
  const bool tensor_cores = ops.coopmat() && n >= 16 && (c.hd == 64 || c.hd == 128 || c.hd == 256);
  for (int variant = 0; variant < (tensor_cores ? 3 : 2); ++variant) {
    ops.use_subgroups(variant != 1);
    ops.use_coop_attention(variant == 2);
    Stream s(dev);
    ops.attention(s, qb, kcb, vcb, pb, ob, part, kv, static_cast<int>(layer), n, {c.n_heads, scale, c.softcap, c.window});
    s.submit_and_wait();
    const char* what[] = {"attention", "attention without subgroups", "attention on the tensor cores"};
    expect_close(download_floats(dev, ob, q.size()), want, variant == 2 ? 3e-3f : 2e-5f, what[variant], variant == 2);
  }
  ops.use_subgroups(true);
  ops.use_coop_attention(true);
}

// A few queries (decode, short prompts): positions split over workgroups for long caches.
TEST(VulkanKernels, AttentionMatchesDirectSoftmax) {
  NEED_DEVICE();
  Ops ops(*dev);
  std::mt19937 rng(13);
  for (const AttentionCase& c :
       {AttentionCase{1, 1, 64, 1, 0, 0.0f}, AttentionCase{9, 3, 64, 70, 0, 0.0f}, AttentionCase{4, 1, 256, 130, 0, 0.0f},
        AttentionCase{2, 2, 80, 200, 33, 0.0f}, AttentionCase{4, 2, 32, 65, 0, 5.0f}, AttentionCase{2, 1, 64, 1000, 300, 0.0f},
        AttentionCase{3, 3, 128, 1000, 0, 0.0f}}) {
    // Queries of the last positions and of position 0.
    std::vector<uint32_t> pos = {0, static_cast<uint32_t>(c.positions - 1)};
    if (c.positions > 2) pos.insert(pos.begin() + 1, static_cast<uint32_t>(c.positions / 2));
    check_attention(*dev, ops, c, pos, rng);
  }
}

// A prompt's many consecutive queries (attention_prefill.comp: 16 queries a workgroup),
// token counts that are not a multiple of 16, after earlier positions or from position 0.
TEST(VulkanKernels, PromptAttentionMatchesDirectSoftmax) {
  NEED_DEVICE();
  Ops ops(*dev);
  std::mt19937 rng(14);
  struct Prompt {
    AttentionCase c;
    int64_t n_tokens;
  };
  for (const Prompt& pr : {Prompt{{9, 3, 64, 100, 0, 0.0f}, 70}, Prompt{{4, 1, 256, 200, 0, 0.0f}, 200},
                           Prompt{{2, 2, 80, 300, 33, 0.0f}, 300}, Prompt{{4, 2, 32, 170, 0, 5.0f}, 150},
                           Prompt{{1, 1, 64, 600, 0, 0.0f}, 517}, Prompt{{2, 1, 128, 700, 100, 0.0f}, 301},
                           Prompt{{3, 1, 64, 90, 40, 30.0f}, 90}}) {
    std::vector<uint32_t> pos;
    for (int64_t t = pr.c.positions - pr.n_tokens; t < pr.c.positions; ++t) pos.push_back(static_cast<uint32_t>(t));
    check_attention(*dev, ops, pr.c, pos, rng);
  }
}

// Decode: attention given the token's fresh keys and values (normalized where QK norms are
// on, rotated, rounded and written to the cache by attention itself) against rmsnorm,
// store_kv then attention, over the same cache.
TEST(VulkanKernels, DecodeAttentionTakesFreshKeysAsStoreKvThenAttention) {
  NEED_DEVICE();
  Ops ops(*dev);
  std::mt19937 rng(15);
  for (bool half_split : {false, true})
    for (bool norms : {false, true})
    for (const AttentionCase& c : {AttentionCase{1, 1, 64, 1, 0, 0.0f}, AttentionCase{9, 3, 64, 70, 0, 0.0f},
                                   AttentionCase{4, 1, 256, 130, 0, 0.0f}, AttentionCase{2, 2, 80, 200, 33, 0.0f},
                                   AttentionCase{4, 2, 128, 1000, 0, 5.0f}})
      for (uint32_t p : {0u, static_cast<uint32_t>(c.positions / 2), static_cast<uint32_t>(c.positions - 1)}) {
        SCOPED_TRACE("heads " + std::to_string(c.n_heads) + "/" + std::to_string(c.n_kv_heads) + " hd " +
                     std::to_string(c.hd) + " position " + std::to_string(p) + (half_split ? " neox" : "") +
                     (norms ? " qk norms" : ""));
        const int64_t kvd = c.n_kv_heads * c.hd, qd = c.n_heads * c.hd;
        const Ops::KvLayout kv{c.n_kv_heads, c.hd, c.positions + 3};
        std::vector<uint16_t> cache(static_cast<size_t>(2 * kv.capacity * kvd));
        std::normal_distribution<float> d(0.0f, 1.0f);
        for (uint16_t& h : cache) h = fp32_to_fp16(d(rng));
        const std::vector<float> q = random_floats(static_cast<size_t>(qd), rng), k = random_floats(static_cast<size_t>(kvd), rng),
                                 v = random_floats(static_cast<size_t>(kvd), rng);
        std::vector<float> cs, sn;
        angle_tables({p}, c.hd, cs, sn);
        Buffer cb = upload_floats(*dev, cs), sb = upload_floats(*dev, sn), vb = upload_floats(*dev, v);
        Buffer qn = upload_floats(*dev, random_floats(static_cast<size_t>(c.hd), rng));
        Buffer kn = upload_floats(*dev, random_floats(static_cast<size_t>(c.hd), rng));
        constexpr float eps = 1e-6f;
        Buffer pb = upload_words(*dev, {p});
        const Ops::AttentionParams ap{c.n_heads, 1.0f / std::sqrt(static_cast<float>(c.hd)), c.softcap, c.window};
        std::vector<float> outs[2];
        std::vector<uint16_t> caches[2][2];
        for (int fresh = 0; fresh < 2; ++fresh) {
          Buffer qb = upload_floats(*dev, q), kb = upload_floats(*dev, k);
          Buffer kcb = dev->alloc(cache.size() * 2, Memory::Device), vcb = dev->alloc(cache.size() * 2, Memory::Device);
          dev->upload(kcb, cache.data(), cache.size() * 2);
          dev->upload(vcb, cache.data(), cache.size() * 2);
          Buffer ob = dev->alloc(q.size() * 4, Memory::Readback), part = ops.attention_part(kv, c.n_heads, 1);
          Stream s(*dev);
          if (fresh == 0) {
            if (norms) {
              ops.rmsnorm(s, qb, qn, qb, c.n_heads, c.hd, eps);
              ops.rmsnorm(s, kb, kn, kb, c.n_kv_heads, c.hd, eps);
              s.barrier();
            }
            ops.store_kv(s, kb, vb, cb, sb, pb, kcb, vcb, kv, 1, 1, half_split, &qb, c.n_heads);
            s.barrier();
            ops.attention(s, qb, kcb, vcb, pb, ob, part, kv, 1, 1, ap);
          } else {
            const Ops::FreshKv fk{&kb, &vb, &cb, &sb, half_split, norms ? &qn : nullptr, norms ? &kn : nullptr, eps};
            ops.attention(s, qb, kcb, vcb, pb, ob, part, kv, 1, 1, ap, &fk);
          }
          s.submit_and_wait();
          outs[fresh] = download_floats(*dev, ob, q.size());
          for (int i = 0; i < 2; ++i) {
            caches[fresh][i].resize(cache.size());
            dev->download(i == 0 ? kcb : vcb, caches[fresh][i].data(), cache.size() * 2);
          }
        }
        expect_close(outs[1], outs[0], 1e-5f, "attention output");
        for (int i = 0; i < 2; ++i) {
          std::vector<float> got(cache.size()), want(cache.size());
          for (size_t j = 0; j < cache.size(); ++j) got[j] = fp16_to_fp32(caches[1][i][j]), want[j] = fp16_to_fp32(caches[0][i][j]);
          expect_close(got, want, 1e-3f, i == 0 ? "k cache" : "v cache");  // one f16 rounding step at most
        }
      }
}

TEST(VulkanKernels, RefusesWhatNoKernelReads) {
  NEED_DEVICE();
  Ops ops(*dev);
  std::vector<uint8_t> w(84 * 2);
  const kernels::WeightView q2k{DType::Q2_K, w.data(), 2, 256, 84};
  EXPECT_THROW(ops.upload(q2k), Error);
  std::vector<uint8_t> f(48 * 4);
  const kernels::WeightView odd{DType::F32, f.data(), 1, 48, 192};  // not whole 32-value units
  EXPECT_THROW(ops.upload(odd), Error);
}

TEST(VulkanDevices, ListedDevicesDescribeThemselves) {
  NEED_DEVICE();
  const std::vector<DeviceInfo> all = list_devices();
  ASSERT_FALSE(all.empty());
  EXPECT_FALSE(all[0].name.empty());
  EXPECT_GT(all[0].subgroup_size, 0u);
  EXPECT_THROW(Device::open(static_cast<int>(all.size())), Error);
}

}  // namespace
#endif  // MINNOW_HAVE_VULKAN
