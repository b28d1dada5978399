// Float rows -> GGUF tensor types (the writer side of tensor/dtype.hpp).
//
// The legacy types (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0) without an importance vector reproduce
// ggml's reference rounding (and so the `gguf` Python package's quantizers) byte for byte.
// The K types (Q4_K, Q5_K, Q6_K), and the legacy types when given importance, choose each
// scale (and minimum) by a search minimizing the weighted squared error (quant/scale_search).
#pragma once
#include <cstdint>

#include "tensor/dtype.hpp"

namespace minnow {

// F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K, Q6_K.
bool can_quantize(DType t);

// Quantizes one row of n floats (n a multiple of t's block size) into dtype_bytes(t, n)
// bytes at dst. importance: n per-column weights >= 0 (e.g. mean squared activations), or
// nullptr for none. Throws Error on a NaN or infinite input, or a type it cannot write.
void quantize_row(DType t, const float* x, int64_t n, void* dst, const float* importance = nullptr);

// GPTQ (Frantar et al., 2022, "GPTQ: Accurate Post-Training Quantization for Generative
// Pre-trained Transformers"): block by block in column order, each block's scales chosen
// from its current values (with importance), then each value rounded against them and its
// error carried onto the later columns through u, the n x n upper Cholesky factor of the
// inverse of the matmul input's second-moment matrix (quant/gptq.hpp). What is kept small
// is then the error of the matmul's outputs on the calibration inputs, not each weight's.
// x is overwritten. Throws as quantize_row.
void quantize_row_gptq(DType t, float* x, int64_t n, void* dst, const float* importance, const float* u);

}  // namespace minnow
