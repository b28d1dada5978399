// Scalar references of the fused element-wise kernels (contracts in kernels/ops.hpp).
#pragma once
#include <cstdint>

namespace minnow::kernels {

void rmsnorm_ref(const float* x, const float* w, float* y, int64_t rows, int64_t d, float eps);
void rope_ref(float* x, int64_t n_heads, int64_t head_dim, const float* cos, const float* sin, bool half_split);
void rope_store_kv_f16_ref(const float* k, const float* v, int64_t n_heads, int64_t head_dim, const float* cos,
                           const float* sin, bool half_split, uint16_t* k_out, uint16_t* v_out);
void glu_silu_ref(const float* gate, const float* up, float* out, int64_t n);
void glu_gelu_tanh_ref(const float* gate, const float* up, float* out, int64_t n);
void gelu_erf_ref(const float* x, float* out, int64_t n);
void sigmoid_ref(const float* x, float* out, int64_t n);

}  // namespace minnow::kernels
