// sgemm and sgemm_rows (kernels/ops.hpp) with AVX2 + FMA: register tiles of R rows x V
// vectors of 8 columns (6 x 2 in the body), B's rows streamed along k through their
// pointers, the epilogue fused into the store. The dense form names its rows and runs the
// same code.
#include <immintrin.h>

#include <algorithm>
#include <cmath>

#include "kernels/ops.hpp"
#include "kernels/sgemm_blocking.hpp"

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

// Where a tile's sums start and end: a k-block after the first continues the sums stored
// in C (the same fused multiply-add chain in p order), and only the last applies the epilogue.
struct Pass {
  const VecEpilogue& ep;
  bool resume, finish;
  __m256 start(const float* c) const { return resume ? _mm256_loadu_ps(c) : _mm256_setzero_ps(); }
  __m256 start(const float* c, __m256i mask) const { return resume ? _mm256_maskload_ps(c, mask) : _mm256_setzero_ps(); }
  __m256 end(__m256 v, int64_t row) const { return finish ? ep(v, row) : v; }
};

// R rows x V vectors at (i, j); the last vector holds `tail` columns (1..8).
template <int R, int V, bool kMasked>
[[gnu::noinline]] void tile(const float* a, int64_t lda, const float* const* b, int64_t j, float* c, int64_t ldc, int64_t k,
          const Pass& pass, int64_t row0, int64_t tail) {
  const __m256i mask = lane_mask(tail);
  __m256 acc[R][V];
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < V; ++v)
      acc[r][v] = (kMasked && v == V - 1) ? pass.start(c + r * ldc + v * 8, mask) : pass.start(c + r * ldc + v * 8);
  for (int64_t p = 0; p < k; ++p) {
    const float* bp = b[p] + j;
    __m256 bv[V];
    for (int v = 0; v < V; ++v) bv[v] = (kMasked && v == V - 1) ? _mm256_maskload_ps(bp + v * 8, mask) : _mm256_loadu_ps(bp + v * 8);
    for (int r = 0; r < R; ++r) {
      const __m256 av = _mm256_broadcast_ss(a + r * lda + p);
      for (int v = 0; v < V; ++v) acc[r][v] = _mm256_fmadd_ps(av, bv[v], acc[r][v]);
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int v = 0; v < V; ++v) {
      const __m256 x = pass.end(acc[r][v], row0 + r);
      float* out = c + r * ldc + v * 8;
      if (kMasked && v == V - 1) _mm256_maskstore_ps(out, mask, x);
      else _mm256_storeu_ps(out, x);
    }
  }
}

// The body's 6 x 16 tile with named accumulators: 12 sums, 2 B vectors and a broadcast
// (GCC keeps an accumulator array in memory, and spills a 4 x 24 tile's 16 at -O3). Not
// inlined: inside the caller's loops GCC spills its sums again.
[[gnu::noinline]] void tile_6x16(const float* a, int64_t lda, const float* const* b, int64_t j, float* c, int64_t ldc, int64_t k,
               const Pass& pass, int64_t row0) {
  float* cr[6];
  for (int r = 0; r < 6; ++r) cr[r] = c + r * ldc;
  __m256 c00 = pass.start(cr[0]), c01 = pass.start(cr[0] + 8), c10 = pass.start(cr[1]), c11 = pass.start(cr[1] + 8);
  __m256 c20 = pass.start(cr[2]), c21 = pass.start(cr[2] + 8), c30 = pass.start(cr[3]), c31 = pass.start(cr[3] + 8);
  __m256 c40 = pass.start(cr[4]), c41 = pass.start(cr[4] + 8), c50 = pass.start(cr[5]), c51 = pass.start(cr[5] + 8);
  const float* a0 = a;
  for (int64_t p = 0; p < k; ++p, ++a0) {
    const float* bp = b[p] + j;
    const __m256 b0 = _mm256_loadu_ps(bp), b1 = _mm256_loadu_ps(bp + 8);
    __m256 av = _mm256_broadcast_ss(a0);
    c00 = _mm256_fmadd_ps(av, b0, c00); c01 = _mm256_fmadd_ps(av, b1, c01);
    av = _mm256_broadcast_ss(a0 + lda);
    c10 = _mm256_fmadd_ps(av, b0, c10); c11 = _mm256_fmadd_ps(av, b1, c11);
    av = _mm256_broadcast_ss(a0 + 2 * lda);
    c20 = _mm256_fmadd_ps(av, b0, c20); c21 = _mm256_fmadd_ps(av, b1, c21);
    av = _mm256_broadcast_ss(a0 + 3 * lda);
    c30 = _mm256_fmadd_ps(av, b0, c30); c31 = _mm256_fmadd_ps(av, b1, c31);
    av = _mm256_broadcast_ss(a0 + 4 * lda);
    c40 = _mm256_fmadd_ps(av, b0, c40); c41 = _mm256_fmadd_ps(av, b1, c41);
    av = _mm256_broadcast_ss(a0 + 5 * lda);
    c50 = _mm256_fmadd_ps(av, b0, c50); c51 = _mm256_fmadd_ps(av, b1, c51);
  }
  auto store = [&](int r, __m256 x0, __m256 x1) {
    _mm256_storeu_ps(cr[r], pass.end(x0, row0 + r));
    _mm256_storeu_ps(cr[r] + 8, pass.end(x1, row0 + r));
  };
  store(0, c00, c01);
  store(1, c10, c11);
  store(2, c20, c21);
  store(3, c30, c31);
  store(4, c40, c41);
  store(5, c50, c51);
}

// Rows i .. i + R of the column range [j, j + w) (w <= 16).
template <int R>
void tile_any(const float* a, int64_t lda, const float* const* b, int64_t j, int64_t w, float* c, int64_t ldc, int64_t k,
              const Pass& pass, int64_t row0) {
  if (w == 16) {
    if constexpr (R == 6) tile_6x16(a, lda, b, j, c + j, ldc, k, pass, row0);
    else tile<R, 2, false>(a, lda, b, j, c + j, ldc, k, pass, row0, 8);
    return;
  }
  if (w >= 8) {
    tile<R, 1, false>(a, lda, b, j, c + j, ldc, k, pass, row0, 8);
    j += 8, w -= 8;
  }
  if (w > 0) tile<R, 1, true>(a, lda, b, j, c + j, ldc, k, pass, row0, w);
}

}  // namespace

void sgemm_rows_avx2(const float* a, int64_t lda, const float* const* b, float* c, int64_t ldc, int64_t m, int64_t n,
                     int64_t k, const Epilogue& e) {
  const VecEpilogue ep(e);
  sgemm_blocked<6, 16>(a, lda, b, c, ldc, m, n, k,
                       [&](auto rows, const float* ai, const float* const* bk, int64_t j, int64_t w, float* ci, KBlock kb,
                           int64_t row0) {
                         tile_any<decltype(rows)::value>(ai, lda, bk, j, w, ci, ldc, kb.k, Pass{ep, kb.resume, kb.finish},
                                                         row0);
                       });
}

void sgemm_avx2(const float* a, int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc, int64_t m, int64_t n,
                int64_t k, const Epilogue& e) {
  sgemm_rows_avx2(a, lda, dense_rows(b, ldb, k), c, ldc, m, n, k, e);
}

namespace {

// Eight outputs of stride S at x + o * S: the even lanes of two loads for S = 2.
template <int S>
inline __m256 taps8(const float* p) {
  if constexpr (S == 1) {
    return _mm256_loadu_ps(p);
  } else {
    const __m256i even = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
    const __m256 lo = _mm256_permutevar8x32_ps(_mm256_loadu_ps(p), even);
    const __m256 hi = _mm256_permutevar8x32_ps(_mm256_loadu_ps(p + 8), even);
    return _mm256_permute2f128_ps(lo, hi, 0x20);
  }
}

// The common 3 x 3 window with its nine weights held in registers; returns the outputs done.
template <int S>
int64_t depthwise_3x3(const float* x, int64_t ldx, const float* w, float* y, int64_t n, const VecEpilogue& ep) {
  __m256 wv[9];
  for (int t = 0; t < 9; ++t) wv[t] = _mm256_set1_ps(w[t]);
  int64_t o = 0;
  for (; o + 8 <= n; o += 8) {
    __m256 acc = _mm256_setzero_ps();
    for (int i = 0; i < 3; ++i) {
      const float* row = x + i * ldx + o * S;
      acc = _mm256_fmadd_ps(wv[i * 3], taps8<S>(row), acc);
      acc = _mm256_fmadd_ps(wv[i * 3 + 1], taps8<S>(row + 1), acc);
      acc = _mm256_fmadd_ps(wv[i * 3 + 2], taps8<S>(row + 2), acc);
    }
    _mm256_storeu_ps(y + o, ep(acc, 0));
  }
  return o;
}

// Any window: four vectors of outputs per pass, so each weight is broadcast once for 32
// outputs; then single vectors. Returns the outputs done.
template <int S>
int64_t depthwise_any(const float* x, int64_t ldx, const float* w, int kh, int kw, float* y, int64_t n,
                      const VecEpilogue& ep) {
  int64_t o = 0;
  for (; o + 32 <= n; o += 32) {
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    for (int i = 0; i < kh; ++i) {
      const float* row = x + i * ldx + o * S;
      for (int j = 0; j < kw; ++j) {
        const __m256 wv = _mm256_set1_ps(w[i * kw + j]);
        a0 = _mm256_fmadd_ps(wv, taps8<S>(row + j), a0);
        a1 = _mm256_fmadd_ps(wv, taps8<S>(row + j + 8 * S), a1);
        a2 = _mm256_fmadd_ps(wv, taps8<S>(row + j + 16 * S), a2);
        a3 = _mm256_fmadd_ps(wv, taps8<S>(row + j + 24 * S), a3);
      }
    }
    _mm256_storeu_ps(y + o, ep(a0, 0));
    _mm256_storeu_ps(y + o + 8, ep(a1, 0));
    _mm256_storeu_ps(y + o + 16, ep(a2, 0));
    _mm256_storeu_ps(y + o + 24, ep(a3, 0));
  }
  for (; o + 8 <= n; o += 8) {
    __m256 acc = _mm256_setzero_ps();
    for (int i = 0; i < kh; ++i) {
      const float* row = x + i * ldx + o * S;
      for (int j = 0; j < kw; ++j) acc = _mm256_fmadd_ps(_mm256_set1_ps(w[i * kw + j]), taps8<S>(row + j), acc);
    }
    _mm256_storeu_ps(y + o, ep(acc, 0));
  }
  return o;
}

}  // namespace

void depthwise_row_avx2(const float* x, int64_t ldx, const float* w, int kh, int kw, int stride, float* y, int64_t n,
                        const Epilogue& e) {
  const VecEpilogue ep(e);
  int64_t o = 0;
  if (kh == 3 && kw == 3 && stride == 1) {
    o = depthwise_3x3<1>(x, ldx, w, y, n, ep);
  } else if (kh == 3 && kw == 3 && stride == 2) {
    o = depthwise_3x3<2>(x, ldx, w, y, n, ep);
  } else if (stride == 1) {
    o = depthwise_any<1>(x, ldx, w, kh, kw, y, n, ep);
  } else if (stride == 2) {
    o = depthwise_any<2>(x, ldx, w, kh, kw, y, n, ep);
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
