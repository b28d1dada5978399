// The one matmul entry point. Decode (few tokens): each weight row is streamed once
// through a fused dequantize-dot kernel. Prefill: a panel of rows is dequantized once
// into an f32 scratch and reused by every token through the register-blocked GEMM.
#include <algorithm>
#include <vector>

#include "base/thread_pool.hpp"
#include "kernels/ops.hpp"

namespace minnow::kernels {
namespace {

constexpr int64_t kPanelRows = 16;       // rows dequantized together for prefill
constexpr int64_t kDecodeRowsPerTask = 32;
constexpr int64_t kPrefillMinTokens = 4;  // below this the fused dot is cheaper

std::vector<float>& scratch(size_t n) {
  thread_local std::vector<float> buf;
  if (buf.size() < n) buf.resize(n);
  return buf;
}

}  // namespace

void dequantize_row(const WeightView& w, int64_t r, float* out) {
  const DTypeTraits& tr = dtype_traits(w.type);
  tr.dequantize(w.data + r * w.row_bytes, out, w.cols / tr.block_size);
}

void matmul(const WeightView& w, const float* x, int64_t n_tokens, float* y, ThreadPool& pool, bool int8_activations) {
  const KernelTable& kt = active();
  const int64_t k = w.cols;
  if (n_tokens < kPrefillMinTokens && int8_activations && kt.dot_q8(w.type)) {
    // Integer path: activations quantized once here, shared by all threads.
    DotQ8Fn dot = kt.dot_q8(w.type);
    const int64_t nb = k / 32;
    thread_local std::vector<Q8Block> xq;
    if (xq.size() < static_cast<size_t>(n_tokens * nb)) xq.resize(static_cast<size_t>(n_tokens * nb));
    for (int64_t t = 0; t < n_tokens; ++t) quantize_q8(x + t * k, k, &xq[static_cast<size_t>(t * nb)]);
    const Q8Block* xs = xq.data();
    int64_t n_tasks = (w.rows + kDecodeRowsPerTask - 1) / kDecodeRowsPerTask;
    pool.parallel_for(n_tasks, [&](int64_t task, int) {
      int64_t r0 = task * kDecodeRowsPerTask, r1 = std::min(w.rows, r0 + kDecodeRowsPerTask);
      for (int64_t r = r0; r < r1; ++r)
        for (int64_t t = 0; t < n_tokens; ++t) y[t * w.rows + r] = dot(w.data + r * w.row_bytes, xs + t * nb, k);
    });
    return;
  }
  if (n_tokens < kPrefillMinTokens) {
    DotRowFn fused = kt.dot_row(w.type);
    // Block sums of x, shared by every row (kernels for formats with an offset use them).
    const int64_t nb = k / 32;
    thread_local std::vector<float> xsum;
    if (xsum.size() < static_cast<size_t>(n_tokens * nb)) xsum.resize(static_cast<size_t>(n_tokens * nb));
    if (fused)
      for (int64_t i = 0; i < n_tokens * nb; ++i) {
        float s = 0;
        for (int j = 0; j < 32; ++j) s += x[i * 32 + j];
        xsum[static_cast<size_t>(i)] = s;
      }
    const float* xs = xsum.data();
    int64_t n_tasks = (w.rows + kDecodeRowsPerTask - 1) / kDecodeRowsPerTask;
    pool.parallel_for(n_tasks, [&](int64_t task, int) {
      int64_t r0 = task * kDecodeRowsPerTask, r1 = std::min(w.rows, r0 + kDecodeRowsPerTask);
      float* tmp = fused ? nullptr : scratch(k).data();
      for (int64_t r = r0; r < r1; ++r) {
        const uint8_t* row = w.data + r * w.row_bytes;
        if (!fused) dequantize_row(w, r, tmp);
        for (int64_t t = 0; t < n_tokens; ++t)
          y[t * w.rows + r] = fused ? fused(row, x + t * k, xs + t * nb, k) : kt.dot_f32(tmp, x + t * k, k);
      }
    });
    return;
  }
  int64_t n_tasks = (w.rows + kPanelRows - 1) / kPanelRows;
  pool.parallel_for(n_tasks, [&](int64_t task, int) {
    int64_t r0 = task * kPanelRows, rows = std::min(w.rows - r0, kPanelRows);
    float* panel = scratch(static_cast<size_t>(kPanelRows * k)).data();
    for (int64_t r = 0; r < rows; ++r) dequantize_row(w, r0 + r, panel + r * k);
    kt.gemm_f32(panel, rows, x, n_tokens, k, y + r0, w.rows);
  });
}

}  // namespace minnow::kernels
