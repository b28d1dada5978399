// Micro-benchmarks of the matmul paths (Google Benchmark). Bytes/s counts weight bytes
// streamed, the figure that bounds decode.
#include <benchmark/benchmark.h>

#include <cstring>
#include <random>
#include <vector>

#include "base/thread_pool.hpp"
#include "kernels/ops.hpp"
#include "kernels/packed.hpp"
#include "tensor/fp16.hpp"

using namespace minnow;
using namespace minnow::kernels;

namespace {

struct Matrix {
  std::vector<uint8_t> bytes, packed;
  WeightView view;
};

// A weight matrix of random blocks with small finite f16 scales.
Matrix make_matrix(DType t, int64_t rows, int64_t cols) {
  const DTypeTraits& tr = dtype_traits(t);
  const size_t row_bytes = static_cast<size_t>(cols / tr.block_size * tr.block_bytes);
  Matrix m;
  m.bytes.resize(row_bytes * static_cast<size_t>(rows));
  std::mt19937 rng(1);
  for (auto& b : m.bytes) b = static_cast<uint8_t>(rng() & 0x3f);  // keeps f16 fields small and finite
  m.view = {t, m.bytes.data(), rows, cols, row_bytes};
  if (packable(t)) {  // as the loader leaves them
    m.packed.resize(packed_bytes(t, rows, cols));
    pack_rows(m.view, m.packed.data());
    m.view.packed = m.packed.data();
  }
  return m;
}

void BM_Matmul(benchmark::State& state, DType t, int threads, bool int8) {
  const int64_t rows = state.range(0), cols = state.range(1), tokens = state.range(2);
  Matrix m = make_matrix(t, rows, cols);
  std::vector<float> x(static_cast<size_t>(cols * tokens), 0.01f), y(static_cast<size_t>(rows * tokens));
  ThreadPool pool(threads);
  for (auto _ : state) {
    matmul(m.view, x.data(), tokens, y.data(), pool, int8);
    benchmark::DoNotOptimize(y.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(m.bytes.size()));
  state.counters["FLOP"] = benchmark::Counter(2.0 * rows * cols * tokens * static_cast<double>(state.iterations()),
                                                 benchmark::Counter::kIsRate, benchmark::Counter::kIs1000);
}

// SmolLM2 shapes: ffn_up (1536 x 576) and the output head (49152 x 576), decode and prefill.
#define MATMUL_BENCH(T, TH, I8)                                                                 \
  BENCHMARK_CAPTURE(BM_Matmul, T##_t##TH##_int8_##I8, DType::T, TH, I8)                          \
      ->Args({1536, 576, 1})->Args({1536, 576, 4})->Args({49152, 576, 1})->Args({1536, 576, 128})               \
      ->Unit(benchmark::kMicrosecond)

MATMUL_BENCH(Q4_1, 1, false);
MATMUL_BENCH(Q4_1, 2, false);
MATMUL_BENCH(Q4_1, 1, true);
MATMUL_BENCH(Q8_0, 1, false);
MATMUL_BENCH(Q4_0, 1, false);
MATMUL_BENCH(Q4_K, 1, false);
MATMUL_BENCH(F16, 1, false);

// One packed-row kernel over a 1536 x 576 matrix (SmolLM2's ffn_up; K-quants: 640 x 2048,
// Gemma 3 270M's ffn_down), one thread, one token (decode) or four (a prompt's step), per
// kernel table: the integer dot instructions compared.
void BM_PackedRows(benchmark::State& state, DType t, const char* table, bool int8, int tokens) {
  const KernelTable* kt = kernels_named(table);
  if (!kt) {
    state.SkipWithError("kernel table not available on this CPU");
    return;
  }
  const bool k_quant = dtype_traits(t).block_size == 256;
  const int64_t rows = k_quant ? 640 : 1536, cols = k_quant ? 2048 : 576, nb = cols / 32;
  Matrix m = make_matrix(t, rows, cols);
  std::vector<float> x(static_cast<size_t>(cols), 0.01f), out(static_cast<size_t>(16 * tokens));
  std::vector<Q8Block> x8(static_cast<size_t>(nb * tokens));
  std::vector<Q15Block> x15(static_cast<size_t>(nb * tokens));
  for (int i = 0; i < tokens; ++i) {
    quantize_q8(x.data(), cols, x8.data() + i * nb);
    quantize_q15(x.data(), cols, x15.data() + i * nb);
  }
  const size_t group_bytes = packed_group_bytes(t, cols);
  // Tables with 16-row kernels (two groups a call) use them, as kernels::matmul does.
  const PackedDotFn k8 = kt->packed16 ? kt->packed16(t) : kt->packed_dot(t);
  const PackedDot15Fn k15 = kt->packed16_15 ? kt->packed16_15(t) : kt->packed_dot15(t);
  const int64_t step = kt->packed16 ? 2 : 1;
  for (auto _ : state) {
    for (int64_t g = 0; g < rows / kPackRows; g += step) {
      const uint8_t* group = m.packed.data() + static_cast<size_t>(g) * group_bytes;
      if (int8)
        k8(group, x8.data(), nb, tokens, out.data());
      else
        k15(group, x15.data(), nb, tokens, out.data());
    }
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(m.packed.size()));
  state.counters["tok/s"] = benchmark::Counter(static_cast<double>(state.iterations() * tokens), benchmark::Counter::kIsRate);
}

#define PACKED_BENCH(T)                                                                                            \
  BENCHMARK_CAPTURE(BM_PackedRows, T##_scalar_q15, DType::T, "scalar", false, 1)->Unit(benchmark::kMicrosecond);   \
  BENCHMARK_CAPTURE(BM_PackedRows, T##_avx2_q15, DType::T, "avx2", false, 1)->Unit(benchmark::kMicrosecond);       \
  BENCHMARK_CAPTURE(BM_PackedRows, T##_vnni_q15, DType::T, "avx2+vnni", false, 1)->Unit(benchmark::kMicrosecond);  \
  BENCHMARK_CAPTURE(BM_PackedRows, T##_avx2_int8, DType::T, "avx2", true, 1)->Unit(benchmark::kMicrosecond);       \
  BENCHMARK_CAPTURE(BM_PackedRows, T##_vnni_int8, DType::T, "avx2+vnni", true, 1)->Unit(benchmark::kMicrosecond);  \
  BENCHMARK_CAPTURE(BM_PackedRows, T##_avx512vnni_int8, DType::T, "avx2+avx512vnni", true, 1)                      \
      ->Unit(benchmark::kMicrosecond);                                                                             \
  BENCHMARK_CAPTURE(BM_PackedRows, T##_avx2_q15_4tok, DType::T, "avx2", false, 4)->Unit(benchmark::kMicrosecond);  \
  BENCHMARK_CAPTURE(BM_PackedRows, T##_vnni_q15_4tok, DType::T, "avx2+vnni", false, 4)                             \
      ->Unit(benchmark::kMicrosecond);                                                                             \
  BENCHMARK_CAPTURE(BM_PackedRows, T##_avx512vnni_q15_4tok, DType::T, "avx2+avx512vnni", false, 4)                 \
      ->Unit(benchmark::kMicrosecond);                                                                             \
  BENCHMARK_CAPTURE(BM_PackedRows, T##_avx2_int8_4tok, DType::T, "avx2", true, 4)->Unit(benchmark::kMicrosecond);  \
  BENCHMARK_CAPTURE(BM_PackedRows, T##_avx512vnni_int8_4tok, DType::T, "avx2+avx512vnni", true, 4)                 \
      ->Unit(benchmark::kMicrosecond);                                                                             \
  BENCHMARK_CAPTURE(BM_PackedRows, T##_avx512_q15_4tok, DType::T, "avx512", false, 4)->Unit(benchmark::kMicrosecond);\
  BENCHMARK_CAPTURE(BM_PackedRows, T##_avx512_int8_4tok, DType::T, "avx512", true, 4)->Unit(benchmark::kMicrosecond);\
  BENCHMARK_CAPTURE(BM_PackedRows, T##_avx512_q15_8tok, DType::T, "avx512", false, 8)->Unit(benchmark::kMicrosecond);\
  BENCHMARK_CAPTURE(BM_PackedRows, T##_avx512_int8_8tok, DType::T, "avx512", true, 8)->Unit(benchmark::kMicrosecond);\
  BENCHMARK_CAPTURE(BM_PackedRows, T##_avx512_int8, DType::T, "avx512", true, 1)->Unit(benchmark::kMicrosecond);    \
  BENCHMARK_CAPTURE(BM_PackedRows, T##_avx512_q15, DType::T, "avx512", false, 1)->Unit(benchmark::kMicrosecond)

PACKED_BENCH(Q4_0);
PACKED_BENCH(Q4_1);
PACKED_BENCH(Q5_0);
PACKED_BENCH(Q8_0);
PACKED_BENCH(Q4_K);
PACKED_BENCH(Q5_K);
PACKED_BENCH(Q6_K);

// Fused dequantize-dot rows (x86) against the fallback they replace (dequantize a row,
// then dot_f32), one thread, a Gemma 3 270M ffn_down-sized matrix (640 x 2048).
void BM_RowDot(benchmark::State& state, DType t, bool fused) {
  const int64_t rows = 640, cols = 2048;
  Matrix m = make_matrix(t, rows, cols);
  std::vector<float> x(static_cast<size_t>(cols), 0.01f), tmp(static_cast<size_t>(cols));
  const KernelTable& kt = active();
  DotRowFn f = kt.dot_row(t);
  if (fused && !f) {
    state.SkipWithError("no fused kernel for this type here");
    return;
  }
  for (auto _ : state) {
    float sum = 0;
    for (int64_t r = 0; r < rows; ++r) {
      if (fused) {
        sum += f(m.view.data + r * m.view.row_bytes, x.data(), cols);
      } else {
        dequantize_row(m.view, r, tmp.data());
        sum += kt.dot_f32(tmp.data(), x.data(), cols);
      }
    }
    benchmark::DoNotOptimize(sum);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(m.bytes.size()));
}

#define ROW_BENCH(T)                                                                          \
  BENCHMARK_CAPTURE(BM_RowDot, T##_fused, DType::T, true)->Unit(benchmark::kMicrosecond);      \
  BENCHMARK_CAPTURE(BM_RowDot, T##_dequantize_then_dot, DType::T, false)->Unit(benchmark::kMicrosecond)

ROW_BENCH(Q5_0);
ROW_BENCH(Q5_1);
ROW_BENCH(Q4_K);
ROW_BENCH(Q5_K);
ROW_BENCH(Q6_K);

// Softmax numerators over one attention row of 512 scores: vectorized exp vs std::exp.
void BM_ExpSum(benchmark::State& state, bool fast) {
  const KernelTable& kt = fast ? active() : ref_kernels();
  std::vector<float> s(512);
  for (auto _ : state) {
    for (size_t i = 0; i < s.size(); ++i) s[i] = -0.01f * static_cast<float>(i);
    benchmark::DoNotOptimize(kt.exp_sum(s.data(), static_cast<int64_t>(s.size()), 0.0f));
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(s.size()));
}
BENCHMARK_CAPTURE(BM_ExpSum, scalar, false);
BENCHMARK_CAPTURE(BM_ExpSum, simd, true);

// The ONNX runtime's convolution GEMM, C (m filters x n pixels) = A (m x k) B (k x n), as
// one call of a kernel table ("scalar", "avx2", "avx512", "neon"; skipped where this CPU has
// none). rows: B's rows as pointers into a padded plane (sgemm_rows, the im2col-free
// convolution), else dense (sgemm). GFLOP/s counts 2 m n k per call.
void BM_Sgemm(benchmark::State& state, const char* table, bool rows) {
  const KernelTable* kt = kernels_named(table);
  if (!kt) return state.SkipWithError("no such kernel table on this CPU");
  const int64_t m = state.range(0), n = state.range(1), k = state.range(2), ld = n + 8;
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> a(static_cast<size_t>(m * k)), b(static_cast<size_t>(k * ld)), bias(static_cast<size_t>(m)),
      c(static_cast<size_t>(m * n));
  for (float& v : a) v = u(rng);
  for (float& v : b) v = u(rng);
  std::vector<const float*> b_rows(static_cast<size_t>(k));
  for (int64_t p = 0; p < k; ++p) b_rows[static_cast<size_t>(p)] = b.data() + p * ld;
  Epilogue e;
  e.bias = bias.data();
  e.lo = 0;  // bias + Relu, the common fused case
  for (auto _ : state) {
    if (rows) kt->sgemm_rows(a.data(), k, b_rows.data(), c.data(), n, m, n, k, e);
    else kt->sgemm(a.data(), k, b.data(), ld, c.data(), n, m, n, k, e);
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["FLOP"] = benchmark::Counter(2.0 * static_cast<double>(m * n * k) * static_cast<double>(state.iterations()),
                                              benchmark::Counter::kIsRate, benchmark::Counter::kIs1000);
}
// A 1 x 1 convolution of m filters (k x 8 per group of 8, packed once) over n pixels into
// the channel-interleaved layout: pointwise8 a group at a time, or pointwise16 (`sixteen`)
// two at a time, to set against BM_Sgemm's shapes.
void BM_Pointwise(benchmark::State& state, const char* table, bool sixteen) {
  const KernelTable* kt = kernels_named(table);
  if (!kt) return state.SkipWithError("no such kernel table on this CPU");
  const int64_t m = state.range(0), n = state.range(1), k = state.range(2), groups = (m + 15) / 16 * 2;
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> w(static_cast<size_t>(groups * k * 8)), x(static_cast<size_t>(k * n)), y(static_cast<size_t>(groups * n * 8));
  for (float& v : w) v = u(rng);
  for (float& v : x) v = u(rng);
  Epilogue e;
  e.lo = 0;
  const int64_t used = (m + 7) / 8;  // the groups m filters fill
  for (auto _ : state) {
    for (int64_t g = 0; g < used; g += sixteen ? 2 : 1) {
      const float* wg = w.data() + g * k * 8;
      float* yg = y.data() + g * n * 8;
      if (sixteen) kt->pointwise16(x.data(), n, wg, wg + k * 8, k, yg, yg + n * 8, n, e, e);
      else kt->pointwise8(x.data(), n, wg, k, yg, n, e);
    }
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["FLOP"] = benchmark::Counter(2.0 * static_cast<double>(m * n * k) * static_cast<double>(state.iterations()),
                                              benchmark::Counter::kIsRate, benchmark::Counter::kIs1000);
}
// 1 x 1 shapes (filters, pixels, channels): rec's, a wide one, then MobileNetV2's at 7 x 7, 14 x 14, 56 x 56, 112 x 112.
#define POINTWISE_SHAPES ->Args({240, 192, 240})->Args({480, 1600, 120})->Args({320, 49, 960})->Args({1280, 49, 320})->Args({96, 196, 576})->Args({24, 3136, 144})->Args({96, 12544, 16})
BENCHMARK_CAPTURE(BM_Pointwise, pointwise8_avx2, "avx2", false) POINTWISE_SHAPES->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Pointwise, pointwise16_avx2, "avx2", true) POINTWISE_SHAPES->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Sgemm, mobilenet_avx2, "avx2", false) POINTWISE_SHAPES->Unit(benchmark::kMicrosecond);

// Shapes from the OCR models: a 240 -> 240 pointwise layer over 192 pixels (rec), a 3 x 3
// 96 -> 24 layer (det's), a 3 x 3 64 -> 64 layer, a 1280 x 96 x 320 pointwise (MobileNetV2's last).
#define SGEMM_BENCH(TABLE)                                                                                      \
  BENCHMARK_CAPTURE(BM_Sgemm, TABLE, #TABLE, false)                                                             \
      ->Args({240, 192, 240})->Args({24, 192, 864})->Args({64, 192, 576})->Args({1280, 96, 320})                \
      ->Unit(benchmark::kMicrosecond);                                                                          \
  BENCHMARK_CAPTURE(BM_Sgemm, TABLE##_rows, #TABLE, true)                                                       \
      ->Args({240, 192, 240})->Args({24, 192, 864})->Args({64, 192, 576})->Args({1280, 96, 320})                \
      ->Unit(benchmark::kMicrosecond)
SGEMM_BENCH(scalar);
#if defined(__x86_64__)
SGEMM_BENCH(avx2);
SGEMM_BENCH(avx512);
#elif defined(__aarch64__)
SGEMM_BENCH(neon);
#endif

}  // namespace

BENCHMARK_MAIN();
