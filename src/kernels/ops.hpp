// Kernel contracts. Each has a scalar reference (kernels/ref) and may have faster
// per-ISA versions (kernels/x86, kernels/arm) behind one table chosen once at start-up.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

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
// What sgemm applies to each sum before storing it: v = clamp(v + bias[i], lo, hi), then
// with hard_swish v = v * clamp(v / 6 + 1/2, 0, 1) * scale + shift (a convolution's fused
// bias, Relu / Clip, HardSwish and affine layer).
struct Epilogue {
  const float* bias = nullptr;
  float lo = -__builtin_huge_valf(), hi = __builtin_huge_valf();
  bool hard_swish = false;
  float scale = 1, shift = 0;
};
inline float apply_epilogue(float v, const Epilogue& e, int64_t row) {  // the scalar form
  if (e.bias) v += e.bias[row];
  v = v < e.lo ? e.lo : (v > e.hi ? e.hi : v);
  if (e.hard_swish) {
    float g = v * (1.0f / 6) + 0.5f;
    g = g < 0.0f ? 0.0f : (g > 1.0f ? 1.0f : g);
    v = v * g * e.scale + e.shift;
  }
  return v;
}
// C[i * ldc + j] = epilogue(sum over p < k of A[i * lda + p] * B[p * ldb + j]) for i < m,
// j < n: row-major A, B and C, B's rows along n (the layout of convolution: filters x
// (im2col or channels x pixels) -> channels x pixels). Each output is a fused multiply-add
// chain in p order, so every version agrees to rounding.
using SgemmFn = void (*)(const float* a, int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc, int64_t m,
                         int64_t n, int64_t k, const Epilogue& e);
void sgemm_ref(const float* a, int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc, int64_t m, int64_t n,
               int64_t k, const Epilogue& e);
// sgemm with B's row p at b[p] (B[p][j] = b[p][j]): a convolution's taps read straight from
// its padded input, with no im2col copy.
using SgemmRowsFn = void (*)(const float* a, int64_t lda, const float* const* b, float* c, int64_t ldc, int64_t m,
                             int64_t n, int64_t k, const Epilogue& e);
void sgemm_rows_ref(const float* a, int64_t lda, const float* const* b, float* c, int64_t ldc, int64_t m, int64_t n,
                    int64_t k, const Epilogue& e);
// One output row of a depthwise convolution over a zero-padded input plane:
// y[o] = epilogue(sum over i < kh, j < kw of w[i * kw + j] * x[i * ldx + o * stride + j])
// for o < n (taps summed by fused multiply-adds in (i, j) order; the epilogue's row 0).
using DepthwiseRowFn = void (*)(const float* x, int64_t ldx, const float* w, int kh, int kw, int stride, float* y,
                                int64_t n, const Epilogue& e);
void depthwise_row_ref(const float* x, int64_t ldx, const float* w, int kh, int kw, int stride, float* y, int64_t n,
                       const Epilogue& e);
// The same for 8 channels at once over a channel-interleaved padded input (lane l of
// every pixel is channel l): y[o * 8 + l] = epilogue(sum over i < kh, j < kw of
// w[(i * kw + j) * 8 + l] * x[(i * ldx + o * stride + j) * 8 + l]) with the epilogue's row l,
// for o < n; ldx counts pixels. Taps summed in depthwise_row's order, so its numbers.
using Depthwise8RowFn = void (*)(const float* x, int64_t ldx, const float* w, int kh, int kw, int stride, float* y,
                                 int64_t n, const Epilogue& e);
void depthwise8_row_ref(const float* x, int64_t ldx, const float* w, int kh, int kw, int stride, float* y, int64_t n,
                        const Epilogue& e);
// A 1 x 1 convolution's 8 output channels straight into that interleaved layout:
// y[p * 8 + l] = epilogue(sum over c < k of w[c * 8 + l] * x[c * ldx + p]) with the
// epilogue's row l, for p < n (fused multiply-adds in c order: sgemm's numbers).
using Pointwise8Fn = void (*)(const float* x, int64_t ldx, const float* w, int64_t k, float* y, int64_t n,
                              const Epilogue& e);
void pointwise8_ref(const float* x, int64_t ldx, const float* w, int64_t k, float* y, int64_t n, const Epilogue& e);
// pointwise8 of two groups of 8 filters over the same inputs (w0 -> y0 with e0, w1 -> y1
// with e1), each its numbers: SIMD versions read every input once for both.
using Pointwise16Fn = void (*)(const float* x, int64_t ldx, const float* w0, const float* w1, int64_t k, float* y0,
                               float* y1, int64_t n, const Epilogue& e0, const Epilogue& e1);
void pointwise16_ref(const float* x, int64_t ldx, const float* w0, const float* w1, int64_t k, float* y0, float* y1,
                     int64_t n, const Epilogue& e0, const Epilogue& e1);
// Planes <-> the interleaved layout: dst[p * 8 + l] = src[l * ld + p] for p < n, lanes
// l < `lanes` (1..8; the others 0), and back for the first `lanes` planes.
using Interleave8Fn = void (*)(const float* src, int64_t ld, int lanes, int64_t n, float* dst);
using Deinterleave8Fn = void (*)(const float* src, int lanes, int64_t n, float* dst, int64_t ld);
void interleave8_ref(const float* src, int64_t ld, int lanes, int64_t n, float* dst);
void deinterleave8_ref(const float* src, int lanes, int64_t n, float* dst, int64_t ld);
// y[i] += a * x[i * stride] for i < n (stride 1 or 2): a depthwise convolution's tap on a row.
using AxpyStridedFn = void (*)(float a, const float* x, int64_t stride, float* y, int64_t n);
void axpy_strided_ref(float a, const float* x, int64_t stride, float* y, int64_t n);

// Activations quantized on the fly for the decode kernels over packed weight rows
// (kernels/packed.hpp), 32 values per block, with d * sum(q) for the formats that have a
// minimum or an offset.
// int8 (--int8-decode): q = round(x / d), |q| <= 127. Fastest; logits move by ~0.05.
struct Q8Block {
  float d, s;
  int8_t q[32];
};
void quantize_q8(const float* x, int64_t k, Q8Block* out);  // the reference (scalar)
// The default: |q| <= 16256 (15 bits: logits move by ~1e-4, like int16), split as
// q = 128 * hi + lo with lo in 0..127, so two byte multiplies give the exact products (hi
// and lo fit the signed operand of vpmaddubsw/vpdpbusd, even with a weight's sign moved
// onto them).
struct Q15Block {
  float d, s;
  int8_t hi[32], lo[32];
};
void quantize_q15(const float* x, int64_t k, Q15Block* out);  // the reference (scalar)

// One group of 8 packed rows (nb blocks) against n_tokens (1..kMaxMultiTokens) rows of nb
// activation blocks: out[t * 8 + r] = row r . token t. Per row: exact integer block sums,
// then acc = fma(d_r * x.d, sum, acc) block by block (and minimums in a second
// accumulator: fma(m_r, x.s, .), m = -8 d for Q4_0, -16 d for Q5_0), in that order on
// every path, so SIMD and scalar agree bit for bit and n_tokens changes nothing. K-quants:
// the same per 32-column sub-block with d_r * sc (Q6_K: per 16 columns, two sums) as the
// row scale and dmin_r * mn as the minimum, subtracted (fma(-min, x.s, .)).
using PackedDotFn = void (*)(const uint8_t* group, const Q8Block* x, int64_t nb, int n_tokens, float* out);
using PackedDot15Fn = void (*)(const uint8_t* group, const Q15Block* x, int64_t nb, int n_tokens, float* out);
constexpr int kMaxMultiTokens = 4;
constexpr int kMaxMultiTokens16 = 8;  // the 16-row kernels' (KernelTable::packed16): 32 registers
constexpr int kMaxAttnQueries = 4;

// Prompt products on matrix tiles (AMX): the tokens' blocks (15-bit, or int8 for
// --int8-decode) are laid out for the tiles once per call (lay_out15 / lay_out8, one tile of
// kTileTokens tokens per call, so callers may split the tiles over threads), then rows15 /
// rows8 computes rows r0..r1 of a packed matrix for every token: y[t * w.rows + r]. r0 is a
// multiple of kTileRows; every number is the 8-row kernels' (PackedDot15Fn / PackedDotFn),
// bit for bit.
constexpr int kTileTokens = 16, kTileRows = 16;
struct WeightView;
struct PackedTiles {
  using RowsFn = void (*)(const WeightView& w, int64_t r0, int64_t r1, const uint8_t* layout, int64_t n_tokens, float* y);
  int64_t min_tokens;  // below this the vector kernels are faster
  bool (*supports)(DType t);
  size_t (*layout_bytes)(int64_t n_tokens, int64_t nb, bool int8);  // nb blocks of 32 per token; 64-byte aligned
  void (*lay_out15)(const Q15Block* x, int64_t n_tokens, int64_t nb, int64_t tile, uint8_t* layout);
  void (*lay_out8)(const Q8Block* x, int64_t n_tokens, int64_t nb, int64_t tile, uint8_t* layout);
  RowsFn rows15, rows8;
};

struct KernelTable {
  const char* name;
  DotF32Fn dot_f32;
  GemmF32Fn gemm_f32;
  SgemmFn sgemm;
  SgemmRowsFn sgemm_rows;
  AxpyStridedFn axpy_strided;
  DepthwiseRowFn depthwise_row;
  Depthwise8RowFn depthwise8_row;
  Pointwise8Fn pointwise8;
  Pointwise16Fn pointwise16;
  Interleave8Fn interleave8;
  Deinterleave8Fn deinterleave8;
  DotRowFn dot_row(DType t) const;  // fused kernel for t, or nullptr (dequantize + dot_f32)
  DotRowFn f16;
  // Fused f32 kernels (dot_row) for these types when they are not packed (GGUF loading
  // packs them, so today only the benchmarks and tests reach them).
  DotRowFn q5_0_row, q5_1_row, q4_k_row, q5_k_row, q6_k_row;
  // Half-precision conversions (the f16 KV cache); f32 -> f16 rounds to nearest even.
  void (*f16_to_f32)(const uint16_t* src, float* dst, int64_t n);
  void (*f32_to_f16)(const float* src, uint16_t* dst, int64_t n);
  // s[i] = exp(s[i] - shift) for i < n; returns their sum (softmax's numerators).
  float (*exp_sum)(float* s, int64_t n, float shift);
  // --- Fused element-wise kernels (kernels/ref/elementwise.cpp, kernels/x86/elementwise_avx2.cpp).
  // Row by row: a row's numbers never depend on how many rows share the call. The SIMD
  // versions match the scalar ones bit for bit (rope, rope_store_kv_f16), within 1 ulp of
  // the scale (rmsnorm) or within rel 1e-6 (glu_*, their exp: a few ulps).
  // rows rows of d values: y = x / sqrt(mean(x^2) + eps) * w, squares summed in double; y may be x.
  void (*rmsnorm)(const float* x, const float* w, float* y, int64_t rows, int64_t d, float eps);
  // RoPE in place over n_heads heads of head_dim (even) values by the angles whose cos/sin
  // are given (head_dim / 2 each): (a, b) -> (a cos - b sin, a sin + b cos) for the pairs
  // (2i, 2i + 1), or (i, i + head_dim / 2) when half_split (NeoX style).
  void (*rope)(float* x, int64_t n_heads, int64_t head_dim, const float* cos, const float* sin, bool half_split);
  // The f16 KV cache write in one pass: k rotated as rope does, and v, each n_heads *
  // head_dim values, rounded as f32_to_f16 into k_out / v_out; k itself is left unchanged.
  void (*rope_store_kv_f16)(const float* k, const float* v, int64_t n_heads, int64_t head_dim, const float* cos,
                            const float* sin, bool half_split, uint16_t* k_out, uint16_t* v_out);
  // out[i] = act(gate[i]) * up[i] over n values (out may be gate): SwiGLU (SiLU) and GeGLU
  // (GELU, tanh approximation: PyTorch's gelu_pytorch_tanh).
  void (*glu_silu)(const float* gate, const float* up, float* out, int64_t n);
  void (*glu_gelu_tanh)(const float* gate, const float* up, float* out, int64_t n);
  // out[i] = GELU(x[i]) = x/2 (1 + erf(x / sqrt 2)), the exact form (BERT's "gelu"); out may
  // be x. SIMD versions within 1e-6 of the scalar one's std::erf (relative, or absolute near 0).
  void (*gelu_erf)(const float* x, float* out, int64_t n);
  // out[i] = 1 / (1 + e^-x[i]) (ONNX's Sigmoid); out may be x. SIMD versions within 1e-6 of
  // the scalar one (relative, or absolute near 0).
  void (*sigmoid)(const float* x, float* out, int64_t n);
  // --- end of the element-wise kernels
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
  // The same over a Q8_0 cache (--kv-type q8_0): a head's hd values are hd/32 blocks,
  // positions `stride` bytes apart; each (query, position) computed alike for any nq.
  void (*attn_scores_q8)(const float* q, int nq, const uint8_t* k, int64_t stride, int64_t n, int64_t hd, float* s,
                         int64_t s_stride);
  void (*attn_values_q8)(const float* w, int nq, int64_t w_stride, const uint8_t* v, int64_t stride, int64_t n,
                         int64_t hd, float* out);
  // --- Online (flash-attention) softmax, one tile of one query's raw scores at a time
  // (kernels/ref/attention_ref.cpp, kernels/x86/attention_avx2.cpp). x = s * scale, then
  // cap * tanh(x / cap) when cap > 0; m: the running max (-inf before the first tile), l:
  // the running sum. m' = max(m, max x), s[i] = exp(x_i - m'), l = l * exp(m - m') + sum s;
  // returns exp(m - m'), the factor the query's output accumulator must be scaled by.
  float (*attn_softmax_tile)(float* s, int64_t n, float scale, float cap, float* m, float* l);
  // ---
  // Kernels for packed rows of t (kernels/packed.hpp) against int8 or 15-bit activations.
  PackedDotFn packed_dot(DType t) const;  // or nullptr
  PackedDot15Fn packed_dot15(DType t) const;
  PackedDotFn packed_q4_0, packed_q4_1, packed_q5_0, packed_q5_1, packed_q8_0, packed_q4_k, packed_q5_k, packed_q6_k;
  PackedDot15Fn packed15_q4_0, packed15_q4_1, packed15_q5_0, packed15_q5_1, packed15_q8_0, packed15_q4_k, packed15_q5_k,
      packed15_q6_k;
  // quantize_q8 / quantize_q15, bit for bit.
  void (*to_q8)(const float* x, int64_t k, Q8Block* out);
  void (*to_q15)(const float* x, int64_t k, Q15Block* out);
  // Optional: the same over 16 rows, two consecutive groups (the second packed_group_bytes
  // after the first), for up to kMaxMultiTokens16 tokens, out[t * 16 + r]; bit for bit the 8-row kernels' results. nullptr
  // where the table has none; a function that returns nullptr for a type without them.
  PackedDotFn (*packed16)(DType t);
  PackedDot15Fn (*packed16_15)(DType t);
  const PackedTiles* tiles;  // optional: prompts on matrix tiles, or nullptr
};

const KernelTable& ref_kernels();  // "scalar"
// The SIMD tables compiled in that this CPU can run, best last: x86-64 "avx2",
// "avx2+avx512vnni", "avx2+vnni", "avx512", "avx512+amx"; aarch64 "neon", "neon+dotprod", "neon+i8mm" (from HWCAP).
std::span<const KernelTable* const> simd_kernels();
// The scalar table or one of simd_kernels() by name, or nullptr.
const KernelTable* kernels_named(std::string_view name);
// The table in use, chosen once: MINNOW_FORCE_SCALAR=1 -> scalar; MINNOW_KERNELS=<name> ->
// that table if this CPU runs it; else the best of simd_kernels() (MINNOW_NO_VNNI=1 skips
// both vnni tables); scalar when there is none.
const KernelTable& active();

// A weight matrix as stored: `rows` rows of `cols` elements of `type`, rows contiguous.
struct WeightView {
  DType type;
  const uint8_t* data;
  int64_t rows, cols;
  size_t row_bytes;
  const uint8_t* packed = nullptr;  // the same rows repacked (kernels/packed.hpp), or null
};

// y[t * w.rows + r] = sum_k W[r, k] * x[t * w.cols + k]: the one matmul entry point.
// Packed weights (kernels/packed.hpp): every row of x through the packed kernels, x rounded
// to Q15Block (int8_activations: Q8Block, faster but coarser). Other types: the first
// `vector_rows` rows (decode tokens) through the per-row kernels, the rest (prompt
// tokens) through dequantize + GEMM.
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

// Grows every pool thread's matmul scratch for unpacked matrices of up to max_cols columns,
// so that no thread allocates on its first such task in a decode step.
void reserve_matmul_scratch(int64_t max_cols, ThreadPool& pool);

// Dequantize row r of w into out (w.cols floats).
void dequantize_row(const WeightView& w, int64_t r, float* out);

}  // namespace minnow::kernels
