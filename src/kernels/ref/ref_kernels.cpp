// Scalar reference kernels: the definition of correct for every faster version.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/ops.hpp"
#include "kernels/ref/attention_ref.hpp"
#include "kernels/ref/elementwise.hpp"
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

}  // namespace

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

void quantize_q15(const float* x, int64_t k, Q15Block* out) {
  for (int64_t i = 0; i < k / 32; ++i, x += 32) {
    float amax = 0;
    for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[j]));
    const float d = amax / 16256.0f, inv = d > 0 ? 1.0f / d : 0.0f;
    int32_t sum = 0;
    for (int j = 0; j < 32; ++j) {
      const int q = std::clamp(static_cast<int>(std::nearbyint(x[j] * inv)), -16256, 16256);
      out[i].hi[j] = static_cast<int8_t>(q >> 7);  // arithmetic shift: floor(q / 128)
      out[i].lo[j] = static_cast<int8_t>(q & 127);
      sum += q;
    }
    out[i].d = d;
    out[i].s = d * static_cast<float>(sum);
  }
}

namespace {
// Packed rows: the contract of PackedDotFn, lane by lane. Each block's weights are
// unpacked once into plain integers for every token (and the activations once per token),
// so the integer sums are simple loops compilers vectorize: the scalar path stays usable.
template <DType T>
void unpack_block(const uint8_t* g, int32_t w[8][32]) {
  constexpr bool kMin = T == DType::Q4_1 || T == DType::Q5_1, kHigh = T == DType::Q5_0 || T == DType::Q5_1;
  constexpr size_t kHighAt = kMin ? 32 : 16, kQuantsAt = kHighAt + (kHigh ? 32 : 0);
  const uint8_t* q = g + kQuantsAt;
  for (int r = 0; r < 8; ++r)
    for (int i = 0; i < (T == DType::Q8_0 ? 8 : 4); ++i)
      for (int e = 0; e < 4; ++e) {
        const uint8_t byte = q[32 * i + 4 * r + e];
        if (T == DType::Q8_0) {
          w[r][4 * i + e] = static_cast<int8_t>(byte);
          continue;
        }
        const uint8_t high = kHigh ? g[kHighAt + (r / 4) * 16 + (r % 4) * 4 + i] : 0;
        w[r][4 * i + e] = (byte & 0xf) | ((high >> e) & 1) << 4;
        w[r][16 + 4 * i + e] = (byte >> 4) | ((high >> (4 + e)) & 1) << 4;
      }
}

// A K-quant sub-block (packed.hpp): `planes` bit planes (bits 4, 5) then the nibbles.
void unpack_k_sub(const uint8_t* sub, int planes, int32_t w[8][32]) {
  const uint8_t* q = sub + 32 * planes;
  for (int r = 0; r < 8; ++r)
    for (int i = 0; i < 4; ++i)
      for (int e = 0; e < 4; ++e) {
        const uint8_t byte = q[32 * i + 4 * r + e];
        w[r][4 * i + e] = byte & 0xf;
        w[r][16 + 4 * i + e] = byte >> 4;
        for (int p = 0; p < planes; ++p) {
          const uint8_t high = sub[32 * p + (r / 4) * 16 + (r % 4) * 4 + i];
          w[r][4 * i + e] |= ((high >> e) & 1) << (4 + p);
          w[r][16 + 4 * i + e] |= ((high >> (4 + e)) & 1) << (4 + p);
        }
      }
}

void unpack_activations(const Q8Block& x, int32_t a[32]) {
  for (int j = 0; j < 32; ++j) a[j] = x.q[j];
}
void unpack_activations(const Q15Block& x, int32_t a[32]) {
  for (int j = 0; j < 32; ++j) a[j] = 128 * x.hi[j] + x.lo[j];
}

template <DType T, typename Block>
void packed_ref(const uint8_t* group, const Block* x, int64_t nb, int n_tokens, float* out) {
  constexpr bool kMin = T == DType::Q4_1 || T == DType::Q5_1, kHigh = T == DType::Q5_0 || T == DType::Q5_1;
  constexpr size_t kBytes = (kMin ? 32 : 16) + (kHigh ? 32 : 0) + (T == DType::Q8_0 ? 256 : 128);
  float acc[kMaxMultiTokens][8] = {}, accm[kMaxMultiTokens][8] = {};
  int32_t w[8][32], a[32];
  const uint8_t* g = group;
  for (int64_t b = 0; b < nb; ++b, g += kBytes) {
    unpack_block<T>(g, w);
    for (int t = 0; t < n_tokens; ++t) {
      const Block& xb = x[t * nb + b];
      unpack_activations(xb, a);
      for (int r = 0; r < 8; ++r) {
        int32_t sum = 0;
        for (int j = 0; j < 32; ++j) sum += w[r][j] * a[j];
        const float d = ld_half(g + 2 * r);
        acc[t][r] = std::fma(d * xb.d, static_cast<float>(sum), acc[t][r]);
        if (T == DType::Q8_0) continue;
        const float m = kMin ? ld_half(g + 16 + 2 * r) : d * (T == DType::Q5_0 ? -16.0f : -8.0f);
        accm[t][r] = std::fma(m, xb.s, accm[t][r]);
      }
    }
  }
  for (int t = 0; t < n_tokens; ++t)
    for (int r = 0; r < 8; ++r) out[t * 8 + r] = T == DType::Q8_0 ? acc[t][r] : acc[t][r] + accm[t][r];
}

template <DType T, typename Block>
void packed_k_ref(const uint8_t* group, const Block* x, int64_t nb, int n_tokens, float* out) {
  constexpr bool k6 = T == DType::Q6_K;
  constexpr int kPlanes = T == DType::Q4_K ? 0 : T == DType::Q5_K ? 1 : 2;
  constexpr size_t kHeader = k6 ? 144 : 160, kSub = 32 * kPlanes + 128, kSuper = kHeader + 8 * kSub;
  float acc[kMaxMultiTokens][8] = {}, accm[kMaxMultiTokens][8] = {};
  int32_t w[8][32], a[32];
  const uint8_t* g = group;
  for (int64_t s = 0; s < nb / 8; ++s, g += kSuper)
    for (int j = 0; j < 8; ++j) {
      unpack_k_sub(g + kHeader + j * kSub, kPlanes, w);
      for (int t = 0; t < n_tokens; ++t) {
        const Block& xb = x[t * nb + 8 * s + j];
        unpack_activations(xb, a);
        for (int r = 0; r < 8; ++r) {
          const float d = ld_half(g + 2 * r);
          if (k6) {  // q - 32, and a scale per 16 columns
            int32_t lo = 0, hi = 0;
            for (int c = 0; c < 16; ++c) lo += (w[r][c] - 32) * a[c];
            for (int c = 16; c < 32; ++c) hi += (w[r][c] - 32) * a[c];
            const auto sc_lo = static_cast<float>(static_cast<int8_t>(g[16 + 8 * (2 * j) + r]));
            const auto sc_hi = static_cast<float>(static_cast<int8_t>(g[16 + 8 * (2 * j + 1) + r]));
            acc[t][r] = std::fma(d * sc_lo * xb.d, static_cast<float>(lo), acc[t][r]);
            acc[t][r] = std::fma(d * sc_hi * xb.d, static_cast<float>(hi), acc[t][r]);
            continue;
          }
          int32_t sum = 0;
          for (int c = 0; c < 32; ++c) sum += w[r][c] * a[c];
          const float scale = d * static_cast<float>(g[32 + 8 * j + r]);
          const float min = ld_half(g + 16 + 2 * r) * static_cast<float>(g[96 + 8 * j + r]);
          acc[t][r] = std::fma(scale * xb.d, static_cast<float>(sum), acc[t][r]);
          accm[t][r] = std::fma(-min, xb.s, accm[t][r]);
        }
      }
    }
  for (int t = 0; t < n_tokens; ++t)
    for (int r = 0; r < 8; ++r) out[t * 8 + r] = acc[t][r] + accm[t][r];
}

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
// Q8_0 cache rows: element i of a head is block i/32's q[i % 32] * d.
float q8_value(const uint8_t* head, int64_t i) {
  const uint8_t* b = head + (i / 32) * 34;
  return static_cast<float>(static_cast<int8_t>(b[2 + i % 32])) * ld_half(b);
}

void attn_scores_q8_ref(const float* q, int nq, const uint8_t* k, int64_t stride, int64_t n, int64_t hd, float* s,
                        int64_t s_stride) {
  for (int64_t p = 0; p < n; ++p)
    for (int g = 0; g < nq; ++g) {
      float acc = 0;
      for (int64_t i = 0; i < hd; ++i) acc += q[g * hd + i] * q8_value(k + p * stride, i);
      s[g * s_stride + p] = acc;
    }
}

void attn_values_q8_ref(const float* w, int nq, int64_t w_stride, const uint8_t* v, int64_t stride, int64_t n, int64_t hd,
                        float* out) {
  for (int64_t p = 0; p < n; ++p)
    for (int g = 0; g < nq; ++g)
      for (int64_t i = 0; i < hd; ++i) out[g * hd + i] += w[g * w_stride + p] * q8_value(v + p * stride, i);
}

}  // namespace

PackedDotFn KernelTable::packed_dot(DType t) const {
  switch (t) {
    case DType::Q4_0: return packed_q4_0;
    case DType::Q4_1: return packed_q4_1;
    case DType::Q5_0: return packed_q5_0;
    case DType::Q5_1: return packed_q5_1;
    case DType::Q8_0: return packed_q8_0;
    case DType::Q4_K: return packed_q4_k;
    case DType::Q5_K: return packed_q5_k;
    case DType::Q6_K: return packed_q6_k;
    default: return nullptr;
  }
}

PackedDot15Fn KernelTable::packed_dot15(DType t) const {
  switch (t) {
    case DType::Q4_0: return packed15_q4_0;
    case DType::Q4_1: return packed15_q4_1;
    case DType::Q5_0: return packed15_q5_0;
    case DType::Q5_1: return packed15_q5_1;
    case DType::Q8_0: return packed15_q8_0;
    case DType::Q4_K: return packed15_q4_k;
    case DType::Q5_K: return packed15_q5_k;
    case DType::Q6_K: return packed15_q6_k;
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
  // The reference for fused rows is dequantize + dot_f32 (matmul's fallback).
  static const KernelTable t{.name = "scalar",
                             .dot_f32 = dot_f32_ref,
                             .gemm_f32 = gemm_f32_ref,
                             .sgemm = sgemm_ref,
                             .sgemm_rows = sgemm_rows_ref,
                             .axpy_strided = axpy_strided_ref,
                             .depthwise_row = depthwise_row_ref,
                             .depthwise8_row = depthwise8_row_ref,
                             .pointwise8 = pointwise8_ref,
                             .pointwise16 = pointwise16_ref,
                             .interleave8 = interleave8_ref,
                             .deinterleave8 = deinterleave8_ref,
                             .f16 = nullptr,
                             .q5_0_row = nullptr,
                             .q5_1_row = nullptr,
                             .q4_k_row = nullptr,
                             .q5_k_row = nullptr,
                             .q6_k_row = nullptr,
                             .f16_to_f32 = f16_to_f32_ref,
                             .f32_to_f16 = f32_to_f16_ref,
                             .exp_sum = exp_sum_ref,
                             .rmsnorm = rmsnorm_ref,
                             .rope = rope_ref,
                             .rope_store_kv_f16 = rope_store_kv_f16_ref,
                             .glu_silu = glu_silu_ref,
                             .glu_gelu_tanh = glu_gelu_tanh_ref,
                             .gelu_erf = gelu_erf_ref,
                             .sigmoid = sigmoid_ref,
                             .axpy_f16 = axpy_f16_ref,
                             .attn_scores_f16 = attn_scores_f16_ref,
                             .attn_values_f16 = attn_values_f16_ref,
                             .attn_scores_q8 = attn_scores_q8_ref,
                             .attn_values_q8 = attn_values_q8_ref,
                             .attn_softmax_tile = attn_softmax_tile_ref,
                             .packed_q4_0 = packed_ref<DType::Q4_0, Q8Block>,
                             .packed_q4_1 = packed_ref<DType::Q4_1, Q8Block>,
                             .packed_q5_0 = packed_ref<DType::Q5_0, Q8Block>,
                             .packed_q5_1 = packed_ref<DType::Q5_1, Q8Block>,
                             .packed_q8_0 = packed_ref<DType::Q8_0, Q8Block>,
                             .packed_q4_k = packed_k_ref<DType::Q4_K, Q8Block>,
                             .packed_q5_k = packed_k_ref<DType::Q5_K, Q8Block>,
                             .packed_q6_k = packed_k_ref<DType::Q6_K, Q8Block>,
                             .packed15_q4_0 = packed_ref<DType::Q4_0, Q15Block>,
                             .packed15_q4_1 = packed_ref<DType::Q4_1, Q15Block>,
                             .packed15_q5_0 = packed_ref<DType::Q5_0, Q15Block>,
                             .packed15_q5_1 = packed_ref<DType::Q5_1, Q15Block>,
                             .packed15_q8_0 = packed_ref<DType::Q8_0, Q15Block>,
                             .packed15_q4_k = packed_k_ref<DType::Q4_K, Q15Block>,
                             .packed15_q5_k = packed_k_ref<DType::Q5_K, Q15Block>,
                             .packed15_q6_k = packed_k_ref<DType::Q6_K, Q15Block>,
                             .to_q8 = quantize_q8,
                             .to_q15 = quantize_q15,
                             .packed16 = nullptr,
                             .packed16_15 = nullptr,
                             .tiles = nullptr};
  return t;
}

}  // namespace minnow::kernels
