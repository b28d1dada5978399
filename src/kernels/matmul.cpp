// The one matmul entry point.
// - Packed weights (kernels/packed.hpp) (all rows, decode or prompt): the activations are rounded
//   once per call to 15-bit (or int8) blocks, then each task takes 32 weight rows and runs
//   the packed kernel over them for 4 tokens at a time (each block unpacked once for the
//   4; the 4 tokens' blocks stay in L1 while the task's rows are swept).
// - Other types (F32, F16, BF16 from checkpoints), decode rows: each weight row streamed
//   once, through a fused f32 kernel (F16) or dequantized row by row; prompt rows: a panel of rows is
//   dequantized once into an f32 scratch and reused by every token through the GEMM.
// Several matrices that read the same input (Q/K/V, gate/up) run as one parallel loop,
// so a decode step pays one thread synchronization for them instead of several.
#include <algorithm>
#include <vector>

#include "base/error.hpp"
#include "base/thread_pool.hpp"
#include "kernels/ops.hpp"
#include "kernels/packed.hpp"

namespace minnow::kernels {
namespace {

constexpr int64_t kPanelRows = 16;  // rows dequantized together for the GEMM
constexpr int64_t kRowsPerTask = 32;
// Decode with several threads: tasks of about 1/kDecodeTasksPerThread of a thread's share,
// so each thread streams a few long runs of weights (32-row tasks alternate between the
// threads, and every switch restarts the prefetchers).
constexpr int64_t kDecodeTasksPerThread = 4;
constexpr int64_t kQuantizeInParallel = 16;  // tokens from which rounding x is split over threads
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

// Prefill of unpacked types: a panel of rows is dequantized once and reused by every token.
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

// Decode rows of unpacked types: each weight row is streamed once for all of them.
void row_kernels(std::span<const MatmulOut> outs, const float* x, int64_t n_tokens, ThreadPool& pool) {
  const KernelTable& kt = active();
  const int64_t k = outs[0].w->cols;
  const TaskSplit split(outs, kRowsPerTask);
  pool.parallel_for(split.total(outs.size()), [&](int64_t task, int) {
    const size_t o = split.output_of(task);
    const WeightView& w = *outs[o].w;
    float* y = outs[o].y;
    const int64_t r0 = (task - split.first[o]) * kRowsPerTask, r1 = std::min(w.rows, r0 + kRowsPerTask);
    DotRowFn fused = kt.dot_row(w.type);
    float* tmp = fused ? nullptr : scratch(static_cast<size_t>(k));
    for (int64_t r = r0; r < r1; ++r) {
      if (fused) {
        const uint8_t* row = w.data + r * w.row_bytes;
        for (int64_t t = 0; t < n_tokens; ++t) y[t * w.rows + r] = fused(row, x + t * k, k);
      } else {
        dequantize_row(w, r, tmp);
        for (int64_t t = 0; t < n_tokens; ++t) y[t * w.rows + r] = kt.dot_f32(tmp, x + t * k, k);
      }
    }
  });
}

// x rounded to activation blocks once per call, into a buffer grown once and reused (no
// allocation in the decode loop); split over the threads for prompts.
template <typename Block>
const Block* quantized(const float* x, int64_t n_tokens, int64_t k, void (*quantize)(const float*, int64_t, Block*),
                       ThreadPool& pool) {
  thread_local std::vector<Block> buf;  // the calling thread's; the workers only read it
  const int64_t nb = k / 32;
  Block* q = grow(buf, static_cast<size_t>(n_tokens * nb));
  if (n_tokens < kQuantizeInParallel) {
    for (int64_t t = 0; t < n_tokens; ++t) quantize(x + t * k, k, q + t * nb);
  } else {
    pool.parallel_for(n_tokens, [&](int64_t t, int) { quantize(x + t * k, k, q + t * nb); });
  }
  return q;
}

// Rows r0..r1 (a multiple of 8 apart, or to the end) of a packed matrix against every token:
// 16 rows per call where the table has such kernels (kernel16) and there are several tokens,
// else 8. (One token streams weights from memory: there the 16-row kernels' two streams
// measured slower, Gemma 3 270M's Q8_0 head at -t 1 decode 77 -> 42 tok/s.)
template <typename Block, typename Kernel>
void packed_rows(const WeightView& w, Kernel kernel, Kernel kernel16, const Block* xq, int64_t n_tokens, int64_t r0,
                 int64_t r1, float* y) {
  const int64_t nb = w.cols / 32;
  const size_t group_bytes = packed_group_bytes(w.type, w.cols);
  if (n_tokens == 1) kernel16 = nullptr;
  float out[kMaxMultiTokens16 * 2 * kPackRows];
  const int64_t tokens_per_call = kernel16 ? kMaxMultiTokens16 : kMaxMultiTokens;
  for (int64_t t = 0; t < n_tokens; t += tokens_per_call) {
    const int nt = static_cast<int>(std::min<int64_t>(tokens_per_call, n_tokens - t));
    for (int64_t g = r0; g < r1;) {
      const uint8_t* group = w.packed + static_cast<size_t>(g / kPackRows) * group_bytes;
      const int64_t step = kernel16 && r1 - g > kPackRows ? 2 * kPackRows : kPackRows;
      if (step > kPackRows) {
        kernel16(group, xq + t * nb, nb, nt, out);
      } else {  // a last group alone: the 8-row kernel, kMaxMultiTokens at a time
        for (int j = 0; j < nt; j += kMaxMultiTokens)
          kernel(group, xq + (t + j) * nb, nb, std::min(kMaxMultiTokens, nt - j), out + j * kPackRows);
      }
      const int64_t n_rows = std::min(step, w.rows - g);
      for (int j = 0; j < nt; ++j)
        for (int64_t r = 0; r < n_rows; ++r) y[(t + j) * w.rows + g + r] = out[j * step + r];
      g += step;
    }
  }
}

// Prompts on matrix tiles (KernelTable::tiles): the activations laid out once for the
// tiles, then tasks of kTileTaskRows rows, each unpacking its weights once for all tokens.
constexpr int64_t kTileTaskRows = 64;

bool tiles_take(const KernelTable& kt, std::span<const MatmulOut> outs, int64_t n_tokens) {
  if (!kt.tiles || n_tokens < kt.tiles->min_tokens) return false;
  for (const auto& o : outs)
    if (!kt.tiles->supports(o.w->type)) return false;
  return true;
}

void tiled_product(const KernelTable& kt, std::span<const MatmulOut> outs, const float* x, int64_t n_tokens,
                   ThreadPool& pool, bool int8_activations) {
  const PackedTiles& tiles = *kt.tiles;
  const int64_t k = outs[0].w->cols, nb = k / 32;
  struct alignas(64) Line {
    uint8_t bytes[64];
  };
  thread_local std::vector<Line> buf;  // the calling thread's; the workers only read it
  uint8_t* layout = grow(buf, tiles.layout_bytes(n_tokens, nb, int8_activations) / sizeof(Line) + 1)->bytes;
  const Q8Block* xq8 = int8_activations ? quantized(x, n_tokens, k, kt.to_q8, pool) : nullptr;
  const Q15Block* xq15 = int8_activations ? nullptr : quantized(x, n_tokens, k, kt.to_q15, pool);
  pool.parallel_for((n_tokens + kTileTokens - 1) / kTileTokens, [&](int64_t tile, int) {
    if (xq8)
      tiles.lay_out8(xq8, n_tokens, nb, tile, layout);
    else
      tiles.lay_out15(xq15, n_tokens, nb, tile, layout);
  });
  const PackedTiles::RowsFn rows = int8_activations ? tiles.rows8 : tiles.rows15;
  const TaskSplit split(outs, kTileTaskRows);
  pool.parallel_for(split.total(outs.size()), [&](int64_t task, int) {
    const size_t o = split.output_of(task);
    const WeightView& w = *outs[o].w;
    const int64_t r0 = (task - split.first[o]) * kTileTaskRows, r1 = std::min(w.rows, r0 + kTileTaskRows);
    rows(w, r0, r1, layout, n_tokens, outs[o].y);
  });
}

void packed_product(std::span<const MatmulOut> outs, const float* x, int64_t n_tokens, ThreadPool& pool,
                    bool int8_activations) {
  const KernelTable& kt = active();
  const int64_t k = outs[0].w->cols;
  if (tiles_take(kt, outs, n_tokens)) return tiled_product(kt, outs, x, n_tokens, pool, int8_activations);
  int64_t rows_per_task = kRowsPerTask;
  if (n_tokens < kPrefillMinTokens && pool.size() > 1) {
    int64_t rows = 0;
    for (const auto& o : outs) rows += o.w->rows;
    const int64_t share = rows / (pool.size() * kDecodeTasksPerThread);
    rows_per_task = std::max(kRowsPerTask, share / (2 * kPackRows) * (2 * kPackRows));
  }
  const TaskSplit split(outs, rows_per_task);
  const Q8Block* xq8 = int8_activations ? quantized(x, n_tokens, k, kt.to_q8, pool) : nullptr;
  const Q15Block* xq15 = int8_activations ? nullptr : quantized(x, n_tokens, k, kt.to_q15, pool);
  pool.parallel_for(split.total(outs.size()), [&](int64_t task, int) {
    const size_t o = split.output_of(task);
    const WeightView& w = *outs[o].w;
    const int64_t r0 = (task - split.first[o]) * rows_per_task, r1 = std::min(w.rows, r0 + rows_per_task);
    if (xq8)
      packed_rows(w, kt.packed_dot(w.type), kt.packed16 ? kt.packed16(w.type) : nullptr, xq8, n_tokens, r0, r1, outs[o].y);
    else
      packed_rows(w, kt.packed_dot15(w.type), kt.packed16_15 ? kt.packed16_15(w.type) : nullptr, xq15, n_tokens, r0, r1,
                  outs[o].y);
  });
}

}  // namespace

void reserve_matmul_scratch(int64_t max_cols, ThreadPool& pool) {
  if (max_cols <= 0) return;
  pool.on_every_thread([&](int) { scratch(static_cast<size_t>(kPanelRows * max_cols)); });
}

void dequantize_row(const WeightView& w, int64_t r, float* out) {
  if (w.packed) return dequantize_packed(w, r, 1, out);
  const DTypeTraits& tr = dtype_traits(w.type);
  tr.dequantize(w.data + r * w.row_bytes, out, w.cols / tr.block_size);
}

void matmul(const WeightView& w, const float* x, int64_t n_tokens, float* y, ThreadPool& pool, bool int8_activations,
            int64_t vector_rows) {
  const MatmulOut out{&w, y};
  matmul_many({&out, 1}, x, n_tokens, pool, int8_activations, vector_rows);
}

void matmul_many(std::span<const MatmulOut> outs, const float* x, int64_t n_tokens, ThreadPool& pool,
                 bool int8_activations, int64_t vector_rows) {
  if (outs.empty() || outs.size() > kMaxOutputs) throw Error("matmul: 1 to 4 outputs per call");
  MatmulOut packed[kMaxOutputs], plain[kMaxOutputs];
  size_t n_packed = 0, n_plain = 0;
  for (const auto& o : outs) (o.w->packed ? packed[n_packed++] : plain[n_plain++]) = o;
  if (n_packed > 0) packed_product({packed, n_packed}, x, n_tokens, pool, int8_activations);
  if (n_plain == 0) return;
  if (vector_rows < 0) vector_rows = n_tokens < kPrefillMinTokens ? n_tokens : 0;
  vector_rows = std::min(vector_rows, n_tokens);
  if (vector_rows > 0) row_kernels({plain, n_plain}, x, vector_rows, pool);
  if (vector_rows == n_tokens) return;
  const int64_t k = outs[0].w->cols;
  for (size_t o = 0; o < n_plain; ++o) plain[o].y += vector_rows * plain[o].w->rows;
  gemm_rows({plain, n_plain}, x + vector_rows * k, n_tokens - vector_rows, pool);
}

}  // namespace minnow::kernels
