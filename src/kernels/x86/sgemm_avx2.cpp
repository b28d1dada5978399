// sgemm (kernels/ops.hpp) with AVX2 + FMA: register tiles of R rows x V vectors of 8
// columns (4 x 3 in the body), B's rows streamed along k, bias and clamp fused into the store.
#include <immintrin.h>

#include <algorithm>
#include <cmath>

#include "kernels/ops.hpp"

namespace minnow::kernels {

namespace {

// The epilogue on one vector of row r's sums (the scalar form's operations, in its order).
struct VecEpilogue {
  const Epilogue& e;
  __m256 lo, hi, sixth = _mm256_set1_ps(1.0f / 6), half = _mm256_set1_ps(0.5f), zero = _mm256_setzero_ps(),
                 one = _mm256_set1_ps(1.0f), scale, shift;
  explicit VecEpilogue(const Epilogue& ep)
      : e(ep), lo(_mm256_set1_ps(ep.lo)), hi(_mm256_set1_ps(ep.hi)), scale(_mm256_set1_ps(ep.scale)),
        shift(_mm256_set1_ps(ep.shift)) {}
  __m256 operator()(__m256 v, int64_t r) const {
    if (e.bias) v = _mm256_add_ps(v, _mm256_set1_ps(e.bias[r]));
    v = _mm256_min_ps(_mm256_max_ps(v, lo), hi);
    if (e.hard_swish) {
      __m256 g = _mm256_min_ps(_mm256_max_ps(_mm256_add_ps(_mm256_mul_ps(v, sixth), half), zero), one);
      v = _mm256_add_ps(_mm256_mul_ps(_mm256_mul_ps(v, g), scale), shift);
    }
    return v;
  }
};

// The mask of the first `cols` (1..8) lanes.
__m256i lane_mask(int64_t cols) {
  const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(cols)), idx);
}

// R rows x V vectors at (i, j); the last vector holds `tail` columns (1..8).
template <int R, int V, bool kMasked>
void tile(const float* a, int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc, int64_t k,
          const VecEpilogue& ep, int64_t row0, int64_t tail) {
  __m256 acc[R][V];
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < V; ++v) acc[r][v] = _mm256_setzero_ps();
  const __m256i mask = lane_mask(tail);
  for (int64_t p = 0; p < k; ++p) {
    const float* bp = b + p * ldb;
    __m256 bv[V];
    for (int v = 0; v < V; ++v) bv[v] = (kMasked && v == V - 1) ? _mm256_maskload_ps(bp + v * 8, mask) : _mm256_loadu_ps(bp + v * 8);
    for (int r = 0; r < R; ++r) {
      const __m256 av = _mm256_broadcast_ss(a + r * lda + p);
      for (int v = 0; v < V; ++v) acc[r][v] = _mm256_fmadd_ps(av, bv[v], acc[r][v]);
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int v = 0; v < V; ++v) {
      const __m256 x = ep(acc[r][v], row0 + r);
      float* out = c + r * ldc + v * 8;
      if (kMasked && v == V - 1) _mm256_maskstore_ps(out, mask, x);
      else _mm256_storeu_ps(out, x);
    }
  }
}

// The body's 4 x 24 tile with named accumulators (GCC keeps an accumulator array in memory).
void tile_4x24(const float* a, int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc, int64_t k,
               const VecEpilogue& ep, int64_t row0) {
  __m256 c00 = _mm256_setzero_ps(), c01 = c00, c02 = c00, c10 = c00, c11 = c00, c12 = c00;
  __m256 c20 = c00, c21 = c00, c22 = c00, c30 = c00, c31 = c00, c32 = c00;
  const float* a0 = a;
  const float* a1 = a + lda;
  const float* a2 = a + 2 * lda;
  const float* a3 = a + 3 * lda;
  for (int64_t p = 0; p < k; ++p) {
    const float* bp = b + p * ldb;
    const __m256 b0 = _mm256_loadu_ps(bp), b1 = _mm256_loadu_ps(bp + 8), b2 = _mm256_loadu_ps(bp + 16);
    __m256 av = _mm256_broadcast_ss(a0 + p);
    c00 = _mm256_fmadd_ps(av, b0, c00); c01 = _mm256_fmadd_ps(av, b1, c01); c02 = _mm256_fmadd_ps(av, b2, c02);
    av = _mm256_broadcast_ss(a1 + p);
    c10 = _mm256_fmadd_ps(av, b0, c10); c11 = _mm256_fmadd_ps(av, b1, c11); c12 = _mm256_fmadd_ps(av, b2, c12);
    av = _mm256_broadcast_ss(a2 + p);
    c20 = _mm256_fmadd_ps(av, b0, c20); c21 = _mm256_fmadd_ps(av, b1, c21); c22 = _mm256_fmadd_ps(av, b2, c22);
    av = _mm256_broadcast_ss(a3 + p);
    c30 = _mm256_fmadd_ps(av, b0, c30); c31 = _mm256_fmadd_ps(av, b1, c31); c32 = _mm256_fmadd_ps(av, b2, c32);
  }
  auto store = [&](int r, __m256 x0, __m256 x1, __m256 x2) {
    float* out = c + r * ldc;
    _mm256_storeu_ps(out, ep(x0, row0 + r));
    _mm256_storeu_ps(out + 8, ep(x1, row0 + r));
    _mm256_storeu_ps(out + 16, ep(x2, row0 + r));
  };
  store(0, c00, c01, c02);
  store(1, c10, c11, c12);
  store(2, c20, c21, c22);
  store(3, c30, c31, c32);
}

template <int R>
void rows(const float* a, int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc, int64_t n, int64_t k,
          const VecEpilogue& ep, int64_t row0) {
  int64_t j = 0;
  for (; j + 24 <= n; j += 24) {
    if constexpr (R == 4) tile_4x24(a, lda, b + j, ldb, c + j, ldc, k, ep, row0);
    else tile<R, 3, false>(a, lda, b + j, ldb, c + j, ldc, k, ep, row0, 8);
  }
  for (; j + 8 <= n; j += 8) tile<R, 1, false>(a, lda, b + j, ldb, c + j, ldc, k, ep, row0, 8);
  if (j < n) tile<R, 1, true>(a, lda, b + j, ldb, c + j, ldc, k, ep, row0, n - j);
}

}  // namespace

void sgemm_avx2(const float* a, int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc, int64_t m, int64_t n,
                int64_t k, const Epilogue& e) {
  const VecEpilogue ep(e);
  // Column panels of 240 keep the B rows a tile walks (k x 240 floats) cache-resident
  // across the row blocks.
  constexpr int64_t kPanel = 240;
  for (int64_t j0 = 0; j0 < n; j0 += kPanel) {
    const int64_t nj = std::min(kPanel, n - j0);
    int64_t i = 0;
    for (; i + 4 <= m; i += 4) rows<4>(a + i * lda, lda, b + j0, ldb, c + i * ldc + j0, ldc, nj, k, ep, i);
    const int64_t left = m - i;
    if (left == 3) rows<3>(a + i * lda, lda, b + j0, ldb, c + i * ldc + j0, ldc, nj, k, ep, i);
    if (left == 2) rows<2>(a + i * lda, lda, b + j0, ldb, c + i * ldc + j0, ldc, nj, k, ep, i);
    if (left == 1) rows<1>(a + i * lda, lda, b + j0, ldb, c + i * ldc + j0, ldc, nj, k, ep, i);
  }
}

void depthwise_row_avx2(const float* x, int64_t ldx, const float* w, int kh, int kw, int stride, float* y, int64_t n,
                        const Epilogue& e) {
  const VecEpilogue ep(e);
  int64_t o = 0;
  if (stride == 1 || stride == 2) {
    const __m256i even = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
    for (; o + 8 <= n; o += 8) {
      __m256 acc = _mm256_setzero_ps();
      for (int i = 0; i < kh; ++i) {
        const float* row = x + i * ldx + o * stride;
        for (int j = 0; j < kw; ++j) {
          __m256 v;
          if (stride == 1) {
            v = _mm256_loadu_ps(row + j);
          } else {
            const __m256 lo = _mm256_permutevar8x32_ps(_mm256_loadu_ps(row + j), even);
            const __m256 hi = _mm256_permutevar8x32_ps(_mm256_loadu_ps(row + j + 8), even);
            v = _mm256_permute2f128_ps(lo, hi, 0x20);
          }
          acc = _mm256_fmadd_ps(_mm256_set1_ps(w[i * kw + j]), v, acc);
        }
      }
      _mm256_storeu_ps(y + o, ep(acc, 0));
    }
  }
  // The tail, in the reference's order (std::fma is one instruction here).
  for (; o < n; ++o) {
    float acc = 0;
    for (int i = 0; i < kh; ++i)
      for (int j = 0; j < kw; ++j) acc = std::fma(w[i * kw + j], x[i * ldx + o * stride + j], acc);
    y[o] = apply_epilogue(acc, e, 0);
  }
}

void axpy_strided_avx2(float a, const float* x, int64_t stride, float* y, int64_t n) {
  const __m256 av = _mm256_set1_ps(a);
  int64_t i = 0;
  if (stride == 1) {
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_fmadd_ps(av, _mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i)));
  } else if (stride == 2) {
    // Even lanes of two loads: x[2i], x[2i + 2], ...
    const __m256i even = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
    for (; i + 8 <= n; i += 8) {
      const __m256 lo = _mm256_permutevar8x32_ps(_mm256_loadu_ps(x + 2 * i), even);
      const __m256 hi = _mm256_permutevar8x32_ps(_mm256_loadu_ps(x + 2 * i + 8), even);
      const __m256 xs = _mm256_permute2f128_ps(lo, hi, 0x20);
      _mm256_storeu_ps(y + i, _mm256_fmadd_ps(av, xs, _mm256_loadu_ps(y + i)));
    }
  }
  for (; i < n; ++i) y[i] = std::fma(a, x[i * stride], y[i]);
}

}  // namespace minnow::kernels
