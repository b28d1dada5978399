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

}  // namespace minnow
