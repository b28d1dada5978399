#include <algorithm>
#include <cmath>

#include "kernels/ops.hpp"

namespace minnow::kernels {

void sgemm_ref(const float* a, int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc, int64_t m, int64_t n,
               int64_t k, const Epilogue& e) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float acc = 0;
      for (int64_t p = 0; p < k; ++p) acc = std::fma(a[i * lda + p], b[p * ldb + j], acc);
      c[i * ldc + j] = apply_epilogue(acc, e, i);
    }
}

void sgemm_rows_ref(const float* a, int64_t lda, const float* const* b, float* c, int64_t ldc, int64_t m, int64_t n,
                    int64_t k, const Epilogue& e) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float acc = 0;
      for (int64_t p = 0; p < k; ++p) acc = std::fma(a[i * lda + p], b[p][j], acc);
      c[i * ldc + j] = apply_epilogue(acc, e, i);
    }
}

void axpy_strided_ref(float a, const float* x, int64_t stride, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = std::fma(a, x[i * stride], y[i]);
}

void depthwise_row_ref(const float* x, int64_t ldx, const float* w, int kh, int kw, int stride, float* y, int64_t n,
                       const Epilogue& e) {
  for (int64_t o = 0; o < n; ++o) {
    float acc = 0;
    for (int i = 0; i < kh; ++i)
      for (int j = 0; j < kw; ++j) acc = std::fma(w[i * kw + j], x[i * ldx + o * stride + j], acc);
    y[o] = apply_epilogue(acc, e, 0);
  }
}

void depthwise8_row_ref(const float* x, int64_t ldx, const float* w, int kh, int kw, int stride, float* y, int64_t n,
                        const Epilogue& e) {
  for (int64_t o = 0; o < n; ++o)
    for (int l = 0; l < 8; ++l) {
      float acc = 0;
      for (int i = 0; i < kh; ++i)
        for (int j = 0; j < kw; ++j) acc = std::fma(w[(i * kw + j) * 8 + l], x[(i * ldx + o * stride + j) * 8 + l], acc);
      y[o * 8 + l] = apply_epilogue(acc, e, l);
    }
}

void pointwise8_ref(const float* x, int64_t ldx, const float* w, int64_t k, float* y, int64_t n, const Epilogue& e) {
  for (int64_t p = 0; p < n; ++p)
    for (int l = 0; l < 8; ++l) {
      float acc = 0;
      for (int64_t c = 0; c < k; ++c) acc = std::fma(w[c * 8 + l], x[c * ldx + p], acc);
      y[p * 8 + l] = apply_epilogue(acc, e, l);
    }
}

void pointwise16_ref(const float* x, int64_t ldx, const float* w0, const float* w1, int64_t k, float* y0, float* y1,
                     int64_t n, const Epilogue& e0, const Epilogue& e1) {
  pointwise8_ref(x, ldx, w0, k, y0, n, e0);
  pointwise8_ref(x, ldx, w1, k, y1, n, e1);
}

void interleave8_ref(const float* src, int64_t ld, int lanes, int64_t n, float* dst) {
  for (int64_t p = 0; p < n; ++p)
    for (int l = 0; l < 8; ++l) dst[p * 8 + l] = l < lanes ? src[l * ld + p] : 0.0f;
}

void deinterleave8_ref(const float* src, int lanes, int64_t n, float* dst, int64_t ld) {
  for (int l = 0; l < lanes; ++l)
    for (int64_t p = 0; p < n; ++p) dst[l * ld + p] = src[p * 8 + l];
}

}  // namespace minnow::kernels
