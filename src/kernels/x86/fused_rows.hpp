// AVX2 fused dequantize-and-dot kernels for the weight types without an integer
// activation path (Q5_0, Q5_1, Q4_K, Q5_K, Q6_K): the quants are widened to floats in
// registers and multiplied against f32 activations, so results match dequantize + dot up
// to summation order. Each block's scale and offset are applied once per sub-block:
// sum((d q - m) x) = d sum(q x) - m sum(x).
#pragma once
#include <cstdint>

namespace minnow::kernels {

float dot_q5_0_row_avx2(const void* row, const float* x, int64_t k);
float dot_q5_1_row_avx2(const void* row, const float* x, int64_t k);
float dot_q4_k_row_avx2(const void* row, const float* x, int64_t k);
float dot_q5_k_row_avx2(const void* row, const float* x, int64_t k);
float dot_q6_k_row_avx2(const void* row, const float* x, int64_t k);

}  // namespace minnow::kernels
