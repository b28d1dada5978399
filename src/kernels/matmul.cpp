// The one matmul entry point. Decode rows: each weight row is streamed once for all of
// them, against activations rounded once per call to int16 blocks (Q4_0/Q4_1/Q8_0, each
// weight block unpacked once for up to 4 tokens), or through a fused f32 kernel (F16 and
// the other quantized types), or dequantized row by row. Prompt rows: a panel of rows is
// dequantized once into an f32 scratch and reused by every token through the GEMM.
// Several matrices that read the same input (Q/K/V, gate/up) run as one parallel loop,
// so a decode step pays one thread synchronization for them instead of several.
#include <algorithm>
#include <vector>

#include "base/error.hpp"
#include "base/thread_pool.hpp"
#include "kernels/ops.hpp"

namespace minnow::kernels {
namespace {

constexpr int64_t kPanelRows = 16;       // rows dequantized together for prefill
constexpr int64_t kDecodeRowsPerTask = 32;
constexpr size_t kMaxOutputs = 4;

template <typename T>
T* grow(std::vector<T>& v, size_t n) {
  if (v.size() < n) v.resize(n);
  return v.data();
}

float* scratch(size_t n) {
  thread_local std::vector<float> buf;
  return grow(buf, n);
}

bool uses_block_sums(DType t) { return t == DType::Q4_0 || t == DType::Q4_1; }

}  // namespace

void dequantize_row(const WeightView& w, int64_t r, float* out) {
  const DTypeTraits& tr = dtype_traits(w.type);
  tr.dequantize(w.data + r * w.row_bytes, out, w.cols / tr.block_size);
}

void matmul(const WeightView& w, const float* x, int64_t n_tokens, float* y, ThreadPool& pool, bool int8_activations,
            int64_t vector_rows) {
  const MatmulOut out{&w, y};
  matmul_many({&out, 1}, x, n_tokens, pool, int8_activations, vector_rows);
}

namespace {

// Every task of one parallel loop over the rows of several outputs.
struct TaskSplit {
  int64_t first[kMaxOutputs + 1] = {0};
  TaskSplit(std::span<const MatmulOut> outs, int64_t rows_per_task) {
    for (size_t o = 0; o < outs.size(); ++o) first[o + 1] = first[o] + (outs[o].w->rows + rows_per_task - 1) / rows_per_task;
  }
  int64_t total(size_t n_outs) const { return first[n_outs]; }
  size_t output_of(int64_t task) const {
    size_t o = 0;
    while (task >= first[o + 1]) ++o;
    return o;
  }
};

// Prefill: a panel of rows is dequantized once and reused by every token.
void gemm_rows(std::span<const MatmulOut> outs, const float* x, int64_t n_tokens, ThreadPool& pool) {
  const KernelTable& kt = active();
  const int64_t k = outs[0].w->cols;
  const TaskSplit split(outs, kPanelRows);
  pool.parallel_for(split.total(outs.size()), [&](int64_t task, int) {
    const size_t o = split.output_of(task);
    const WeightView& w = *outs[o].w;
    int64_t r0 = (task - split.first[o]) * kPanelRows, rows = std::min(w.rows - r0, kPanelRows);
    float* panel = scratch(static_cast<size_t>(kPanelRows * k));
    for (int64_t r = 0; r < rows; ++r) dequantize_row(w, r0 + r, panel + r * k);
    kt.gemm_f32(panel, rows, x, n_tokens, k, outs[o].y + r0, w.rows);
  });
}

void vector_rows_product(std::span<const MatmulOut> outs, const float* x, int64_t n_tokens, ThreadPool& pool,
                         bool int8_activations);

}  // namespace

void matmul_many(std::span<const MatmulOut> outs, const float* x, int64_t n_tokens, ThreadPool& pool,
                 bool int8_activations, int64_t vector_rows) {
  if (outs.empty() || outs.size() > kMaxOutputs) throw Error("matmul: 1 to 4 outputs per call");
  if (vector_rows < 0) vector_rows = n_tokens < kPrefillMinTokens ? n_tokens : 0;
  vector_rows = std::min(vector_rows, n_tokens);
  if (vector_rows > 0) vector_rows_product(outs, x, vector_rows, pool, int8_activations);
  if (vector_rows == n_tokens) return;
  const int64_t k = outs[0].w->cols;
  MatmulOut rest[kMaxOutputs];
  for (size_t o = 0; o < outs.size(); ++o) rest[o] = {outs[o].w, outs[o].y + vector_rows * outs[o].w->rows};
  gemm_rows({rest, outs.size()}, x + vector_rows * k, n_tokens - vector_rows, pool);
}

namespace {

// Decode: each weight row is streamed once for all n_tokens rows of x.
void vector_rows_product(std::span<const MatmulOut> outs, const float* x, int64_t n_tokens, ThreadPool& pool,
                         bool int8_activations) {
  const KernelTable& kt = active();
  const int64_t k = outs[0].w->cols;
  const TaskSplit split(outs, kDecodeRowsPerTask);

  // Per-call preparation of x, shared by every row of every output (grown once, reused).
  const int64_t nb = k / 32;
  auto q8_kernel = [&](DType t) { return int8_activations ? kt.dot_q8(t) : nullptr; };
  auto q16_kernel = [&](DType t) { return q8_kernel(t) ? nullptr : kt.dot_q16(t); };
  bool need_sums = false, need_q8 = false, need_q16 = false;
  for (const auto& o : outs) {
    need_q8 |= q8_kernel(o.w->type) != nullptr;
    need_q16 |= q16_kernel(o.w->type) != nullptr;
    need_sums |= uses_block_sums(o.w->type) && q16_kernel(o.w->type);
  }
  thread_local std::vector<Q8Block> xq_buf;
  thread_local std::vector<Q16Block> xq16_buf;
  thread_local std::vector<float> xsum_buf;
  const Q8Block* xq = nullptr;
  const Q16Block* xq16 = nullptr;
  const float* xsum = nullptr;
  if (need_q8) {
    Q8Block* q = grow(xq_buf, static_cast<size_t>(n_tokens * nb));
    for (int64_t t = 0; t < n_tokens; ++t) quantize_q8(x + t * k, k, q + t * nb);
    xq = q;
  }
  if (need_q16) {
    Q16Block* q = grow(xq16_buf, static_cast<size_t>(n_tokens * nb));
    for (int64_t t = 0; t < n_tokens; ++t) quantize_q16(x + t * k, k, q + t * nb);
    xq16 = q;
  }
  if (need_sums) {
    float* s = grow(xsum_buf, static_cast<size_t>(n_tokens * nb));
    for (int64_t t = 0; t < n_tokens; ++t)
      for (int64_t b = 0; b < nb; ++b) {
        float acc = 0;
        for (int j = 0; j < 32; ++j) acc += x[t * k + b * 32 + j];
        s[t * nb + b] = acc;
      }
    xsum = s;
  }

  pool.parallel_for(split.total(outs.size()), [&](int64_t task, int) {
    const size_t o = split.output_of(task);
    const WeightView& w = *outs[o].w;
    float* y = outs[o].y;
    const int64_t r0 = (task - split.first[o]) * kDecodeRowsPerTask, r1 = std::min(w.rows, r0 + kDecodeRowsPerTask);
    DotQ8Fn dot8 = q8_kernel(w.type);
    DotQ16Fn dot16 = q16_kernel(w.type);
    DotQ16MultiFn multi16 = dot16 && n_tokens > 1 ? kt.dot_q16_multi(w.type) : nullptr;
    DotRowFn fused = kt.dot_row(w.type);
    float* tmp = dot8 || dot16 || fused ? nullptr : scratch(static_cast<size_t>(k));
    for (int64_t r = r0; r < r1; ++r) {
      const uint8_t* row = w.data + r * w.row_bytes;
      if (dot8) {
        for (int64_t t = 0; t < n_tokens; ++t) y[t * w.rows + r] = dot8(row, xq + t * nb, k);
      } else if (multi16) {  // each weight block unpacked once for up to 4 tokens
        float out[kMaxMultiTokens];
        for (int64_t t = 0; t < n_tokens; t += kMaxMultiTokens) {
          const int nt = static_cast<int>(std::min<int64_t>(kMaxMultiTokens, n_tokens - t));
          multi16(row, xq16 + t * nb, xsum ? xsum + t * nb : nullptr, k, nt, out);
          for (int j = 0; j < nt; ++j) y[(t + j) * w.rows + r] = out[j];
        }
      } else if (dot16) {
        for (int64_t t = 0; t < n_tokens; ++t) y[t * w.rows + r] = dot16(row, xq16 + t * nb, xsum ? xsum + t * nb : nullptr, k);
      } else if (fused) {
        for (int64_t t = 0; t < n_tokens; ++t) y[t * w.rows + r] = fused(row, x + t * k, k);
      } else {
        dequantize_row(w, r, tmp);
        for (int64_t t = 0; t < n_tokens; ++t) y[t * w.rows + r] = kt.dot_f32(tmp, x + t * k, k);
      }
    }
  });
}

}  // namespace
}  // namespace minnow::kernels
