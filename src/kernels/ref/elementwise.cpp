// Scalar references of the fused element-wise kernels: the transformer's original loops,
// so the scalar path (MINNOW_FORCE_SCALAR=1) computes the numbers it always did.
#include "kernels/ref/elementwise.hpp"

#include <cmath>

#include "tensor/fp16.hpp"

namespace minnow::kernels {
namespace {

// Turns the pairs of n_heads heads of x by their angles and hands each result to
// put(index, value); both values of a pair are read before either is put, so out may be x.
template <class Put>
void rotate_heads(const float* x, int64_t n_heads, int64_t head_dim, const float* cos, const float* sin,
                  bool half_split, Put put) {
  const int64_t half = head_dim / 2;
  for (int64_t h = 0; h < n_heads; ++h) {
    const int64_t base = h * head_dim;
    for (int64_t i = 0; i < half; ++i) {
      const int64_t ia = base + (half_split ? i : 2 * i), ib = base + (half_split ? i + half : 2 * i + 1);
      const float a = x[ia], b = x[ib];
      put(ia, a * cos[i] - b * sin[i]);
      put(ib, a * sin[i] + b * cos[i]);
    }
  }
}

// GELU, tanh approximation (Gemma's gelu_pytorch_tanh), written as PyTorch writes it.
float gelu_tanh(float x) { return 0.5f * x * (1.0f + std::tanh(0.7978845608028654f * (x + 0.044715f * x * x * x))); }

}  // namespace

void rmsnorm_ref(const float* x, const float* w, float* y, int64_t rows, int64_t d, float eps) {
  for (int64_t r = 0; r < rows; ++r, x += d, y += d) {
    double ss = 0;  // squares of floats are exact in double: the sum barely depends on the order
    for (int64_t i = 0; i < d; ++i) ss += static_cast<double>(x[i]) * x[i];
    const float scale = 1.0f / std::sqrt(static_cast<float>(ss / static_cast<double>(d)) + eps);
    for (int64_t i = 0; i < d; ++i) y[i] = x[i] * scale * w[i];
  }
}

void rope_ref(float* x, int64_t n_heads, int64_t head_dim, const float* cos, const float* sin, bool half_split) {
  rotate_heads(x, n_heads, head_dim, cos, sin, half_split, [x](int64_t i, float v) { x[i] = v; });
}

void rope_store_kv_f16_ref(const float* k, const float* v, int64_t n_heads, int64_t head_dim, const float* cos,
                           const float* sin, bool half_split, uint16_t* k_out, uint16_t* v_out) {
  rotate_heads(k, n_heads, head_dim, cos, sin, half_split, [k_out](int64_t i, float x) { k_out[i] = fp32_to_fp16(x); });
  for (int64_t i = 0; i < n_heads * head_dim; ++i) v_out[i] = fp32_to_fp16(v[i]);
}

void glu_silu_ref(const float* gate, const float* up, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
}

void gelu_erf_ref(const float* x, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = 0.5f * x[i] * (1.0f + std::erf(x[i] * 0.70710678118654752f));
}

void sigmoid_ref(const float* x, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];  // e^-|v| only: no overflow for large |v|
    out[i] = v >= 0 ? 1.0f / (1.0f + std::exp(-v)) : std::exp(v) / (1.0f + std::exp(v));
  }
}

void glu_gelu_tanh_ref(const float* gate, const float* up, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = gelu_tanh(gate[i]) * up[i];
}

}  // namespace minnow::kernels
