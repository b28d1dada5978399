// AVX2 versions of the fused element-wise kernels (contracts in kernels/ops.hpp).
#pragma once
#include <cstdint>

namespace minnow::kernels {

void rmsnorm_avx2(const float* x, const float* w, float* y, int64_t rows, int64_t d, float eps);
void rope_avx2(float* x, int64_t n_heads, int64_t head_dim, const float* cos, const float* sin, bool half_split);
void rope_store_kv_f16_avx2(const float* k, const float* v, int64_t n_heads, int64_t head_dim, const float* cos,
                            const float* sin, bool half_split, uint16_t* k_out, uint16_t* v_out);
void glu_silu_avx2(const float* gate, const float* up, float* out, int64_t n);
void glu_gelu_tanh_avx2(const float* gate, const float* up, float* out, int64_t n);
void gelu_erf_avx2(const float* x, float* out, int64_t n);
void sigmoid_avx2(const float* x, float* out, int64_t n);

// y[i] = e^x[i] by the activations' vectorized exp (exposed for its accuracy test).
void exp_avx2(const float* x, float* y, int64_t n);

}  // namespace minnow::kernels
