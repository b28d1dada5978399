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

}  // namespace minnow::kernels
