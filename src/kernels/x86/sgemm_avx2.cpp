// sgemm (kernels/ops.hpp) with AVX2 + FMA: register tiles of R rows x V vectors of 8
// columns (4 x 3 in the body), B's rows streamed along k, bias and clamp fused into the store.
#include <immintrin.h>

#include <algorithm>

#include "kernels/ops.hpp"

namespace minnow::kernels {

namespace {

// The mask of the first `cols` (1..8) lanes.
__m256i lane_mask(int64_t cols) {
  const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(cols)), idx);
}

// R rows x V vectors at (i, j); the last vector holds `tail` columns (1..8).
template <int R, int V>
void tile(const float* a, int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc, int64_t k,
          const float* bias, float lo, float hi, int64_t tail) {
  __m256 acc[R][V];
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < V; ++v) acc[r][v] = _mm256_setzero_ps();
  const __m256i mask = lane_mask(tail);
  for (int64_t p = 0; p < k; ++p) {
    const float* bp = b + p * ldb;
    __m256 bv[V];
    for (int v = 0; v < V; ++v) bv[v] = (v == V - 1 && tail < 8) ? _mm256_maskload_ps(bp + v * 8, mask) : _mm256_loadu_ps(bp + v * 8);
    for (int r = 0; r < R; ++r) {
      const __m256 av = _mm256_broadcast_ss(a + r * lda + p);
      for (int v = 0; v < V; ++v) acc[r][v] = _mm256_fmadd_ps(av, bv[v], acc[r][v]);
    }
  }
  const __m256 vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
  for (int r = 0; r < R; ++r) {
    const __m256 bb = _mm256_set1_ps(bias ? bias[r] : 0.0f);
    for (int v = 0; v < V; ++v) {
      __m256 x = bias ? _mm256_add_ps(acc[r][v], bb) : acc[r][v];
      x = _mm256_min_ps(_mm256_max_ps(x, vlo), vhi);
      float* out = c + r * ldc + v * 8;
      if (v == V - 1 && tail < 8) _mm256_maskstore_ps(out, mask, x);
      else _mm256_storeu_ps(out, x);
    }
  }
}

template <int R>
void rows(const float* a, int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc, int64_t n, int64_t k,
          const float* bias, float lo, float hi) {
  int64_t j = 0;
  for (; j + 24 <= n; j += 24) tile<R, 3>(a, lda, b + j, ldb, c + j, ldc, k, bias, lo, hi, 8);
  for (; j + 8 <= n; j += 8) tile<R, 1>(a, lda, b + j, ldb, c + j, ldc, k, bias, lo, hi, 8);
  if (j < n) tile<R, 1>(a, lda, b + j, ldb, c + j, ldc, k, bias, lo, hi, n - j);
}

}  // namespace

void sgemm_avx2(const float* a, int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc, int64_t m, int64_t n,
                int64_t k, const float* bias, float lo, float hi) {
  // Column panels of 240 keep the B rows a tile walks (k x 240 floats) cache-resident
  // across the row blocks.
  constexpr int64_t kPanel = 240;
  for (int64_t j0 = 0; j0 < n; j0 += kPanel) {
    const int64_t nj = std::min(kPanel, n - j0);
    int64_t i = 0;
    for (; i + 4 <= m; i += 4)
      rows<4>(a + i * lda, lda, b + j0, ldb, c + i * ldc + j0, ldc, nj, k, bias ? bias + i : nullptr, lo, hi);
    const int64_t left = m - i;
    const float* bi = bias ? bias + i : nullptr;
    if (left == 3) rows<3>(a + i * lda, lda, b + j0, ldb, c + i * ldc + j0, ldc, nj, k, bi, lo, hi);
    if (left == 2) rows<2>(a + i * lda, lda, b + j0, ldb, c + i * ldc + j0, ldc, nj, k, bi, lo, hi);
    if (left == 1) rows<1>(a + i * lda, lda, b + j0, ldb, c + i * ldc + j0, ldc, nj, k, bi, lo, hi);
  }
}

}  // namespace minnow::kernels
