// Kernel contracts. Each has a scalar reference (kernels/ref) and may have faster
// per-ISA versions (kernels/x86) behind one table chosen once at start-up.
#pragma once
#include <cstddef>
#include <cstdint>

#include "tensor/dtype.hpp"

namespace minnow {
class ThreadPool;
}

namespace minnow::kernels {

// Dot product of one row of `type` (k elements, k a multiple of the block size) with x.
using DotRowFn = float (*)(const void* row, const float* x, int64_t k);
// y[t * ldy + r] = dot(w[r * k ..], x[t * k ..]) for r < rows, t < n_tokens; w and x are f32.
using GemmF32Fn = void (*)(const float* w, int64_t rows, const float* x, int64_t n_tokens, int64_t k, float* y,
                           int64_t ldy);
using DotF32Fn = float (*)(const float* a, const float* b, int64_t n);

struct KernelTable {
  const char* name;
  DotF32Fn dot_f32;
  GemmF32Fn gemm_f32;
  DotRowFn dot_row(DType t) const;  // fused kernel for t, or nullptr (dequantize + dot_f32)
  DotRowFn q4_0, q4_1, q8_0, f16;
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
void matmul(const WeightView& w, const float* x, int64_t n_tokens, float* y, ThreadPool& pool);
// Dequantize row r of w into out (w.cols floats).
void dequantize_row(const WeightView& w, int64_t r, float* out);

}  // namespace minnow::kernels
