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
using DotRowFn = float (*)(const void* row, const float* x, int64_t k);
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

// Activations rounded to int16 for the default decode path: relative error <= 1/65534 of
// the block maximum (far below what moves a logit), while integer multiply-adds need a
// third of the instructions of float conversion.
struct Q16Block {
  float d;
  int16_t q[32];
};
// xsum[i] = sum of the float activations of block i (for formats with a minimum/offset).
using DotQ16Fn = float (*)(const void* row, const Q16Block* x, const float* xsum, int64_t k);
void quantize_q16(const float* x, int64_t k, Q16Block* out);
// The same for n_tokens (1..4) activation rows at once (x and xsum: n_tokens rows of k/32
// blocks, consecutive): each weight block is unpacked once for all of them, and out[t] is
// bit-identical to the one-token kernel on row t (batched decode must not change numbers).
using DotQ16MultiFn = void (*)(const void* row, const Q16Block* x, const float* xsum, int64_t k, int n_tokens, float* out);
constexpr int kMaxMultiTokens = 4;
constexpr int kMaxAttnQueries = 4;
// x (k floats, k a multiple of 32) -> k/32 blocks; round to nearest, scale = max|x| / 127.
void quantize_q8(const float* x, int64_t k, Q8Block* out);

struct KernelTable {
  const char* name;
  DotF32Fn dot_f32;
  GemmF32Fn gemm_f32;
  DotRowFn dot_row(DType t) const;  // fused kernel for t, or nullptr (dequantize + dot_f32)
  DotRowFn f16;
  DotQ8Fn dot_q8(DType t) const;  // integer kernel for t against Q8 activations, or nullptr
  DotQ8Fn q4_0_q8, q4_1_q8, q8_0_q8;
  DotQ16Fn dot_q16(DType t) const;  // integer kernel against Q16 activations, or nullptr
  DotQ16Fn q4_0_q16, q4_1_q16, q8_0_q16;
  DotRowFn q5_0_row, q5_1_row, q4_k_row, q5_k_row, q6_k_row;  // fused f32 kernels (dot_row)
  // Half-precision conversions (the f16 KV cache); f32 -> f16 rounds to nearest even.
  void (*f16_to_f32)(const uint16_t* src, float* dst, int64_t n);
  void (*f32_to_f16)(const float* src, uint16_t* dst, int64_t n);
  // s[i] = exp(s[i] - shift) for i < n; returns their sum (softmax's numerators).
  float (*exp_sum)(float* s, int64_t n, float shift);
  // y[i] += a * x[i] over an f16 row (attention's weighted sum of an f16 value cache).
  void (*axpy_f16)(float a, const uint16_t* x, float* y, int64_t n);
  // Attention over an f16 cache for nq (<= kMaxAttnQueries) query heads that share one KV
  // head; position p's row is at k + p * stride (hd values). Each (query, position) is
  // computed as dot_row(F16) / axpy_f16 compute it, so grouping changes no number.
  // s[g * s_stride + p] = q[g * hd ..] . K_p
  void (*attn_scores_f16)(const float* q, int nq, const uint16_t* k, int64_t stride, int64_t n, int64_t hd, float* s,
                          int64_t s_stride);
  // out[g * hd + i] += sum over p (in order) of w[g * w_stride + p] * V_p[i]
  void (*attn_values_f16)(const float* w, int nq, int64_t w_stride, const uint16_t* v, int64_t stride, int64_t n,
                          int64_t hd, float* out);
  DotQ16MultiFn dot_q16_multi(DType t) const;  // several tokens at once, or nullptr
  DotQ16MultiFn q4_0_q16_multi, q4_1_q16_multi, q8_0_q16_multi;
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
// The first `vector_rows` rows of x (decode tokens) go through the per-row kernels, which
// round x to int16 blocks for Q4_0/Q4_1/Q8_0 weights (int8_activations: int8 instead:
// faster, but logits move by ~1e-2); the rest (prompt tokens) through dequantize + GEMM.
// Each output depends only on its own row of x and its path, never on n_tokens, so a
// sequence gives the same numbers alone or batched with others. vector_rows < 0: all rows
// when there are fewer than kPrefillMinTokens, else none.
constexpr int64_t kPrefillMinTokens = 4;  // below this the per-row kernels are cheaper
void matmul(const WeightView& w, const float* x, int64_t n_tokens, float* y, ThreadPool& pool,
            bool int8_activations = false, int64_t vector_rows = -1);
// One output of matmul_many: y = W x with W's row count as the leading dimension.
struct MatmulOut {
  const WeightView* w;
  float* y;
};
// Several matmuls over the same x (all W with the same column count) in one parallel loop.
void matmul_many(std::span<const MatmulOut> outs, const float* x, int64_t n_tokens, ThreadPool& pool,
                 bool int8_activations = false, int64_t vector_rows = -1);

// Dequantize row r of w into out (w.cols floats).
void dequantize_row(const WeightView& w, int64_t r, float* out);

}  // namespace minnow::kernels
