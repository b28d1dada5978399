#include "kernels/bf16_gemm.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "base/cpu_features.hpp"
#include "base/error.hpp"
#include "base/thread_pool.hpp"

namespace minnow::kernels {

#if defined(MINNOW_HAVE_X86_KERNELS)
void gemm_bf16_avx2(const uint16_t* panels, int n_panels, int64_t k, const uint16_t* x, int64_t x_stride,
                    int64_t n_tokens, float* y, int64_t ldy, int64_t rows, const float* bias);
void round_bf16_avx2(const float* x, uint16_t* out, int64_t n);
void gemm_bf16_avx512(const uint16_t* panels, int n_panels, int64_t k, const uint16_t* x, int64_t x_stride,
                      int64_t n_tokens, float* y, int64_t ldy, int64_t rows, const float* bias);
#endif
#if defined(MINNOW_HAVE_ARM_KERNELS)
void gemm_bf16_neon(const uint16_t* panels, int n_panels, int64_t k, const uint16_t* x, int64_t x_stride,
                    int64_t n_tokens, float* y, int64_t ldy, int64_t rows, const float* bias);
#endif

namespace {

constexpr int64_t kTokensPerTask = 48;
constexpr int64_t kRoundInParallel = 64;  // tokens from which rounding x is split over threads

Bf16Kernels choose() {
  const char* forced = std::getenv("MINNOW_FORCE_SCALAR");
  if (forced && *forced && std::strcmp(forced, "0") != 0) return {"scalar", gemm_bf16_ref, round_bf16_ref};
#if defined(MINNOW_HAVE_X86_KERNELS)
  const CpuFeatures& cpu = cpu_features();
  if (cpu.avx512_bf16) return {"avx512bf16", gemm_bf16_avx512, round_bf16_avx2};
  if (cpu.avx2_fma_f16c) return {"avx2", gemm_bf16_avx2, round_bf16_avx2};
#endif
#if defined(MINNOW_HAVE_ARM_KERNELS)
  if (cpu_features().neon) return {"neon", gemm_bf16_neon, round_bf16_ref};
#endif
  return {"scalar", gemm_bf16_ref, round_bf16_ref};
}

}  // namespace

uint16_t to_bf16(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  if ((bits & 0x7F800000u) == 0) return static_cast<uint16_t>((bits >> 16) & 0x8000u);  // zero, denormal
  if ((bits & 0x7F800000u) == 0x7F800000u && (bits & 0x007FFFFFu))                    // NaN: stay NaN
    return static_cast<uint16_t>((bits >> 16) | 0x40u);
  bits += 0x7FFFu + ((bits >> 16) & 1u);  // round to nearest even
  return static_cast<uint16_t>(bits >> 16);
}

size_t bf16_panels_size(int64_t rows, int64_t cols) {
  const int64_t panels = (rows + kBf16PanelRows - 1) / kBf16PanelRows;
  return static_cast<size_t>(panels * kBf16PanelRows * cols);
}

void pack_bf16_panels(const WeightView& w, uint16_t* dst) {
  if (w.cols % 2) throw Error("bf16 panels need an even column count");
  std::vector<float> row(static_cast<size_t>(w.cols));
  std::fill(dst, dst + bf16_panels_size(w.rows, w.cols), uint16_t{0});
  for (int64_t r = 0; r < w.rows; ++r) {
    dequantize_row(w, r, row.data());
    uint16_t* panel = dst + (r / kBf16PanelRows) * kBf16PanelRows * w.cols;
    const int64_t lane = r % kBf16PanelRows;
    for (int64_t c = 0; c < w.cols; ++c) panel[(c / 2) * 32 + 2 * lane + c % 2] = to_bf16(row[static_cast<size_t>(c)]);
  }
}

// GCC 12's loop vectorizer turns the two in-order sums of this loop into a wrong result
// (1x6 case of bf16_gemm_test: 22 for 21), so it stays scalar.
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("no-tree-loop-vectorize")))
#endif
void gemm_bf16_ref(const uint16_t* panels, int n_panels, int64_t k, const uint16_t* x, int64_t x_stride,
                   int64_t n_tokens, float* y, int64_t ldy, int64_t rows, const float* bias) {
  for (int p = 0; p < n_panels; ++p) {
    const uint16_t* panel = panels + p * kBf16PanelRows * k;
    for (int64_t t = 0; t < n_tokens; ++t) {
      const uint16_t* xt = x + t * x_stride;
      for (int64_t r = 0; r < kBf16PanelRows && p * kBf16PanelRows + r < rows; ++r) {
        float acc = 0;
        for (int64_t j = 0; j < k / 2; ++j) {
          acc += from_bf16(panel[j * 32 + 2 * r + 1]) * from_bf16(xt[2 * j + 1]);
          acc += from_bf16(panel[j * 32 + 2 * r]) * from_bf16(xt[2 * j]);
        }
        const int64_t row = p * kBf16PanelRows + r;
        y[t * ldy + row] = bias ? acc + bias[row] : acc;
      }
    }
  }
}

void round_bf16_ref(const float* x, uint16_t* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = to_bf16(x[i]);
}

const Bf16Kernels& bf16_kernels() {
  static const Bf16Kernels k = choose();
  return k;
}

void matmul_bf16(const Bf16Matrix& w, const float* x, int64_t n_tokens, float* y, ThreadPool& pool, const float* bias) {
  const int64_t k = w.cols;
  const Bf16Kernels& kt = bf16_kernels();
  thread_local std::vector<uint16_t> buf;  // the calling thread's; workers use it through xs
  if (buf.size() < static_cast<size_t>(n_tokens * k)) buf.resize(static_cast<size_t>(n_tokens * k));
  uint16_t* xs = buf.data();
  if (n_tokens >= kRoundInParallel) {
    constexpr int64_t kRowsPerTask = 16;
    pool.parallel_for((n_tokens + kRowsPerTask - 1) / kRowsPerTask, [&](int64_t task, int) {
      const int64_t t0 = task * kRowsPerTask, n = std::min(kRowsPerTask, n_tokens - t0);
      kt.round(x + t0 * k, xs + t0 * k, n * k);
    });
  } else {
    kt.round(x, xs, n_tokens * k);
  }
  const GemmBf16Fn kernel = kt.gemm;
  const int64_t n_panels = (w.rows + kBf16PanelRows - 1) / kBf16PanelRows;
  const int64_t n_pairs = (n_panels + 1) / 2, n_blocks = (n_tokens + kTokensPerTask - 1) / kTokensPerTask;
  pool.parallel_for(n_pairs * n_blocks, [&](int64_t task, int) {
    const int64_t pair = task % n_pairs, t0 = task / n_pairs * kTokensPerTask;
    const int64_t r0 = pair * 2 * kBf16PanelRows;
    const int np = static_cast<int>(std::min<int64_t>(2, n_panels - 2 * pair));
    kernel(w.panels + r0 * k, np, k, xs + t0 * k, k, std::min(kTokensPerTask, n_tokens - t0), y + t0 * w.rows + r0,
           w.rows, w.rows - r0, bias ? bias + r0 : nullptr);
  });
}

}  // namespace minnow::kernels
