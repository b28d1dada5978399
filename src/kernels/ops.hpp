// Kernel contracts. Each has a scalar reference (kernels/ref) and may have faster
// per-ISA versions (kernels/x86) behind one table chosen once at start-up.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>

#include "tensor/dtype.hpp"

namespace minnow {
class ThreadPool;
}

namespace minnow::kernels {

// Dot product of one row of `type` (k elements, k a multiple of the block size) with x.
// xsum[i] = sum of x over elements [32i, 32i+32) (computed once per matmul, shared by rows).
using DotRowFn = float (*)(const void* row, const float* x, const float* xsum, int64_t k);
// y[t * ldy + r] = dot(w[r * k ..], x[t * k ..]) for r < rows, t < n_tokens; w and x are f32.
using GemmF32Fn = void (*)(const float* w, int64_t rows, const float* x, int64_t n_tokens, int64_t k, float* y,
                           int64_t ldy);
using DotF32Fn = float (*)(const float* a, const float* b, int64_t n);

// Activations quantized on the fly for decode: 32 values, one scale, and d * sum(q)
// (which weight formats with a minimum or an offset need).
struct Q8Block {
  float d, s;
  int8_t q[32];
};
// Dot product of one weight row (k elements) with k/32 quantized activation blocks.
using DotQ8Fn = float (*)(const void* row, const Q8Block* x, int64_t k);
// x (k floats, k a multiple of 32) -> k/32 blocks; round to nearest, scale = max|x| / 127.
void quantize_q8(const float* x, int64_t k, Q8Block* out);

struct KernelTable {
  const char* name;
  DotF32Fn dot_f32;
  GemmF32Fn gemm_f32;
  DotRowFn dot_row(DType t) const;  // fused kernel for t, or nullptr (dequantize + dot_f32)
  DotRowFn q4_0, q4_1, q8_0, f16;
  DotQ8Fn dot_q8(DType t) const;  // integer kernel for t against Q8 activations, or nullptr
  DotQ8Fn q4_0_q8, q4_1_q8, q8_0_q8;
};

const KernelTable& ref_kernels();
const KernelTable* x86_kernels();  // nullptr when not compiled in
// The table in use: x86 when the CPU has AVX2+FMA+F16C, unless MINNOW_FORCE_SCALAR=1.
const KernelTable& active();

// A weight matrix as stored: `rows` rows of `cols` elements of `type`, rows contiguous.
struct WeightView {
  DType type;
  const uint8_t* data;
  int64_t rows, cols;
  size_t row_bytes;
};

// y[t * w.rows + r] = sum_k W[r, k] * x[t * w.cols + k]: the one matmul entry point.
// int8_activations: for few tokens (decode), round x to int8 blocks and use integer dot
// products where the weight type has them: faster, but logits move by ~1e-2.
void matmul(const WeightView& w, const float* x, int64_t n_tokens, float* y, ThreadPool& pool,
            bool int8_activations = false);
// One output of matmul_many: y = W x with W's row count as the leading dimension.
struct MatmulOut {
  const WeightView* w;
  float* y;
};
// Several matmuls over the same x (all W with the same column count) in one parallel loop.
void matmul_many(std::span<const MatmulOut> outs, const float* x, int64_t n_tokens, ThreadPool& pool,
                 bool int8_activations = false);

// Dequantize row r of w into out (w.cols floats).
void dequantize_row(const WeightView& w, int64_t r, float* out);

}  // namespace minnow::kernels
