// Matrix products in bfloat16 for the encoders (embeddings): weights rounded to bf16 once at
// load, activations at each call; products are exact in f32 and summed in f32. On CPUs
// with AVX512-BF16 (vdpbf16ps: two products per f32 lane per instruction) this runs at
// twice the f32 FMA rate; elsewhere (AVX2, NEON) the bf16 values are widened to f32 (same
// numbers up to the order of rounding). Embeddings stay within cosine ~1e-5 of f32's.
//
// Layout: rows in panels of 16 (the last padded with zero rows); within a panel, for each
// pair of columns (2j, 2j+1), the 16 rows' two values: panel[j * 32 + 2 * r + e] is row r's
// column 2j + e. One 64-byte line per column pair holds one f32 lane's pair per row.
#pragma once
#include <cstddef>
#include <cstdint>

#include "kernels/ops.hpp"
#include "tensor/fp16.hpp"

namespace minnow {
class ThreadPool;
}

namespace minnow::kernels {

constexpr int64_t kBf16PanelRows = 16;

// f32 -> bf16, rounded to nearest even; denormals become zero of the same sign (as the
// AVX512-BF16 instructions treat them), NaN stays NaN.
uint16_t to_bf16(float x);
inline float from_bf16(uint16_t h) { return bf16_to_fp32(h); }

// uint16 values a packed matrix of rows x cols (cols even) takes.
size_t bf16_panels_size(int64_t rows, int64_t cols);
// Packs w (any type dequantize_row reads, cols even) into dst (bf16_panels_size values).
void pack_bf16_panels(const WeightView& w, uint16_t* dst);

struct Bf16Matrix {
  int64_t rows = 0, cols = 0;
  const uint16_t* panels = nullptr;
};

// y[t * ldy + r] = row r . token t (+ bias[r] when bias is not null) for the rows of
// n_panels (1 or 2) consecutive panels (only the first `rows` of them are written) and
// n_tokens rows of x (bf16, x_stride apart). Per output: f32 accumulator from 0, then for
// each column pair, in order, + odd product, + even product (the order vdpbf16ps adds
// them in), then + bias.
using GemmBf16Fn = void (*)(const uint16_t* panels, int n_panels, int64_t k, const uint16_t* x, int64_t x_stride,
                            int64_t n_tokens, float* y, int64_t ldy, int64_t rows, const float* bias);
void gemm_bf16_ref(const uint16_t* panels, int n_panels, int64_t k, const uint16_t* x, int64_t x_stride,
                   int64_t n_tokens, float* y, int64_t ldy, int64_t rows, const float* bias);
// x rounded by to_bf16, n values; the SIMD versions give the same bits.
using RoundBf16Fn = void (*)(const float* x, uint16_t* out, int64_t n);
void round_bf16_ref(const float* x, uint16_t* out, int64_t n);

struct Bf16Kernels {
  const char* name;  // "avx512bf16", "avx2", "neon" or "scalar" (MINNOW_FORCE_SCALAR=1, or no SIMD)
  GemmBf16Fn gemm;
  RoundBf16Fn round;
};
const Bf16Kernels& bf16_kernels();  // for this CPU, chosen once

// y[t * w.rows + r] = W[r] . x[t] + bias[r] (bias may be null) over n_tokens rows of
// w.cols floats: x rounded to bf16, then every (panel pair, block of tokens) as a task.
void matmul_bf16(const Bf16Matrix& w, const float* x, int64_t n_tokens, float* y, ThreadPool& pool,
                 const float* bias = nullptr);

}  // namespace minnow::kernels
