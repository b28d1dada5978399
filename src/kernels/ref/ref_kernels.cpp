// Scalar reference kernels: the definition of correct for every faster version.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/ops.hpp"
#include "tensor/fp16.hpp"

namespace minnow::kernels {
namespace {

// Eight independent partial sums: portable C++ that compilers vectorize with plain SSE2,
// so the scalar path stays usable on CPUs without AVX2.
float dot_f32_ref(const float* a, const float* b, int64_t n) {
  float acc[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; ++j) acc[j] += a[i + j] * b[i + j];
  float s = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
  for (; i < n; ++i) s += a[i] * b[i];
  return s;
}

void gemm_f32_ref(const float* w, int64_t rows, const float* x, int64_t n_tokens, int64_t k, float* y, int64_t ldy) {
  for (int64_t t = 0; t < n_tokens; ++t)
    for (int64_t r = 0; r < rows; ++r) y[t * ldy + r] = dot_f32_ref(w + r * k, x + t * k, k);
}

float ld_half(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return fp16_to_fp32(h);
}

// Integer dot products against Q8 activations, block by block.
float dot_q4_0_q8_ref(const void* row, const Q8Block* x, int64_t k) {
  auto* b = static_cast<const uint8_t*>(row);
  float sum = 0;
  for (int64_t i = 0; i < k / 32; ++i, b += 18) {
    int32_t acc = 0;
    for (int j = 0; j < 16; ++j)
      acc += ((b[2 + j] & 0xf) - 8) * x[i].q[j] + ((b[2 + j] >> 4) - 8) * x[i].q[j + 16];
    sum += ld_half(b) * x[i].d * static_cast<float>(acc);
  }
  return sum;
}

float dot_q4_1_q8_ref(const void* row, const Q8Block* x, int64_t k) {
  auto* b = static_cast<const uint8_t*>(row);
  float sum = 0;
  for (int64_t i = 0; i < k / 32; ++i, b += 20) {
    int32_t acc = 0;
    for (int j = 0; j < 16; ++j) acc += (b[4 + j] & 0xf) * x[i].q[j] + (b[4 + j] >> 4) * x[i].q[j + 16];
    sum += ld_half(b) * x[i].d * static_cast<float>(acc) + ld_half(b + 2) * x[i].s;
  }
  return sum;
}

float dot_q8_0_q8_ref(const void* row, const Q8Block* x, int64_t k) {
  auto* b = static_cast<const uint8_t*>(row);
  float sum = 0;
  for (int64_t i = 0; i < k / 32; ++i, b += 34) {
    int32_t acc = 0;
    for (int j = 0; j < 32; ++j) acc += static_cast<int8_t>(b[2 + j]) * x[i].q[j];
    sum += ld_half(b) * x[i].d * static_cast<float>(acc);
  }
  return sum;
}

float dot_q4_0_q16_ref(const void* row, const Q16Block* x, const float*, int64_t k) {
  auto* b = static_cast<const uint8_t*>(row);
  float sum = 0;
  for (int64_t i = 0; i < k / 32; ++i, b += 18) {
    int64_t acc = 0;
    for (int j = 0; j < 16; ++j)
      acc += ((b[2 + j] & 0xf) - 8) * x[i].q[j] + ((b[2 + j] >> 4) - 8) * x[i].q[j + 16];
    sum += ld_half(b) * x[i].d * static_cast<float>(acc);
  }
  return sum;
}

float dot_q4_1_q16_ref(const void* row, const Q16Block* x, const float* xsum, int64_t k) {
  auto* b = static_cast<const uint8_t*>(row);
  float sum = 0;
  for (int64_t i = 0; i < k / 32; ++i, b += 20) {
    int64_t acc = 0;
    for (int j = 0; j < 16; ++j) acc += (b[4 + j] & 0xf) * x[i].q[j] + (b[4 + j] >> 4) * x[i].q[j + 16];
    sum += ld_half(b) * x[i].d * static_cast<float>(acc) + ld_half(b + 2) * xsum[i];
  }
  return sum;
}

float dot_q8_0_q16_ref(const void* row, const Q16Block* x, const float*, int64_t k) {
  auto* b = static_cast<const uint8_t*>(row);
  float sum = 0;
  for (int64_t i = 0; i < k / 32; ++i, b += 34) {
    int64_t acc = 0;
    for (int j = 0; j < 32; ++j) acc += static_cast<int8_t>(b[2 + j]) * x[i].q[j];
    sum += ld_half(b) * x[i].d * static_cast<float>(acc);
  }
  return sum;
}

}  // namespace

void quantize_q16(const float* x, int64_t k, Q16Block* out) {
  for (int64_t i = 0; i < k / 32; ++i, x += 32) {
    float amax = 0;
    for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[j]));
    const float d = amax / 32767.0f, inv = d > 0 ? 1.0f / d : 0.0f;
    for (int j = 0; j < 32; ++j) out[i].q[j] = static_cast<int16_t>(std::nearbyint(x[j] * inv));
    out[i].d = d;
  }
}

DotQ16MultiFn KernelTable::dot_q16_multi(DType t) const {
  switch (t) {
    case DType::Q4_0: return q4_0_q16_multi;
    case DType::Q4_1: return q4_1_q16_multi;
    case DType::Q8_0: return q8_0_q16_multi;
    default: return nullptr;
  }
}

DotQ16Fn KernelTable::dot_q16(DType t) const {
  switch (t) {
    case DType::Q4_0: return q4_0_q16;
    case DType::Q4_1: return q4_1_q16;
    case DType::Q8_0: return q8_0_q16;
    default: return nullptr;
  }
}

void quantize_q8(const float* x, int64_t k, Q8Block* out) {
  for (int64_t i = 0; i < k / 32; ++i, x += 32) {
    float amax = 0;
    for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[j]));
    const float d = amax / 127.0f, inv = d > 0 ? 1.0f / d : 0.0f;
    int32_t sum = 0;
    for (int j = 0; j < 32; ++j) {
      out[i].q[j] = static_cast<int8_t>(std::nearbyint(x[j] * inv));
      sum += out[i].q[j];
    }
    out[i].d = d;
    out[i].s = d * static_cast<float>(sum);
  }
}

namespace {
void f16_to_f32_ref(const uint16_t* src, float* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = fp16_to_fp32(src[i]);
}

void f32_to_f16_ref(const float* src, uint16_t* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = fp32_to_fp16(src[i]);
}

float exp_sum_ref(float* s, int64_t n, float shift) {
  float sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += (s[i] = std::exp(s[i] - shift));
  return sum;
}

void axpy_f16_ref(float a, const uint16_t* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] += a * fp16_to_fp32(x[i]);
}

void attn_scores_f16_ref(const float* q, int nq, const uint16_t* k, int64_t stride, int64_t n, int64_t hd, float* s,
                         int64_t s_stride) {
  for (int64_t p = 0; p < n; ++p)
    for (int g = 0; g < nq; ++g) {
      float acc = 0;
      for (int64_t i = 0; i < hd; ++i) acc += q[g * hd + i] * fp16_to_fp32(k[p * stride + i]);
      s[g * s_stride + p] = acc;
    }
}

void attn_values_f16_ref(const float* w, int nq, int64_t w_stride, const uint16_t* v, int64_t stride, int64_t n,
                         int64_t hd, float* out) {
  for (int64_t p = 0; p < n; ++p)
    for (int g = 0; g < nq; ++g) axpy_f16_ref(w[g * w_stride + p], v + p * stride, out + g * hd, hd);
}
}  // namespace

DotQ8Fn KernelTable::dot_q8(DType t) const {
  switch (t) {
    case DType::Q4_0: return q4_0_q8;
    case DType::Q4_1: return q4_1_q8;
    case DType::Q8_0: return q8_0_q8;
    default: return nullptr;
  }
}

DotRowFn KernelTable::dot_row(DType t) const {
  switch (t) {
    case DType::F16: return f16;
    case DType::Q5_0: return q5_0_row;
    case DType::Q5_1: return q5_1_row;
    case DType::Q4_K: return q4_k_row;
    case DType::Q5_K: return q5_k_row;
    case DType::Q6_K: return q6_k_row;
    default: return nullptr;
  }
}

const KernelTable& ref_kernels() {
  static const KernelTable t{"scalar", dot_f32_ref, gemm_f32_ref, nullptr,
                             dot_q4_0_q8_ref, dot_q4_1_q8_ref, dot_q8_0_q8_ref,
                             dot_q4_0_q16_ref, dot_q4_1_q16_ref, dot_q8_0_q16_ref,
                             // the reference for fused rows is dequantize + dot_f32 (matmul's fallback)
                             nullptr, nullptr, nullptr, nullptr, nullptr, f16_to_f32_ref, f32_to_f16_ref,
                             exp_sum_ref, axpy_f16_ref, attn_scores_f16_ref, attn_values_f16_ref,
                             // the reference for several tokens is one token at a time
                             nullptr, nullptr, nullptr};
  return t;
}

}  // namespace minnow::kernels
