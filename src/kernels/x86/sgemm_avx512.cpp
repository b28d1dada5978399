// sgemm and sgemm_rows (kernels/ops.hpp) with AVX-512F: register tiles of R rows x V
// vectors of 16 columns (8 x 2 in the body: 16 sums, 2 B vectors and a broadcast of the 32
// registers), column tails by lane masks, k blocked so a strip of B stays in L1. The sums
// are the same fused multiply-add chains in p order as the scalar reference's.
#include <immintrin.h>

#include <algorithm>

#include "kernels/ops.hpp"
#include "kernels/sgemm_blocking.hpp"

namespace minnow::kernels {

namespace {

// max and min through their masked forms: the plain ones trip GCC 12's -Wmaybe-uninitialized
// inside its own header (the undefined pass-through operand).
inline __m512 max512(__m512 a, __m512 b) { return _mm512_mask_max_ps(a, 0xffff, a, b); }
inline __m512 min512(__m512 a, __m512 b) { return _mm512_mask_min_ps(a, 0xffff, a, b); }

struct Epilogue512 {
  const Epilogue& e;
  __m512 lo, hi, sixth = _mm512_set1_ps(1.0f / 6), half = _mm512_set1_ps(0.5f), zero = _mm512_setzero_ps(),
                 one = _mm512_set1_ps(1.0f), scale, shift;
  explicit Epilogue512(const Epilogue& ep)
      : e(ep), lo(_mm512_set1_ps(ep.lo)), hi(_mm512_set1_ps(ep.hi)), scale(_mm512_set1_ps(ep.scale)),
        shift(_mm512_set1_ps(ep.shift)) {}
  __m512 operator()(__m512 v, int64_t r) const {  // apply_epilogue's operations, in its order
    if (e.bias) v = _mm512_add_ps(v, _mm512_set1_ps(e.bias[r]));
    v = min512(max512(v, lo), hi);
    if (e.hard_swish) {
      __m512 g = min512(max512(_mm512_add_ps(_mm512_mul_ps(v, sixth), half), zero), one);
      v = _mm512_add_ps(_mm512_mul_ps(_mm512_mul_ps(v, g), scale), shift);
    }
    return v;
  }
};

// A k-block after the first continues the sums stored in C; only the last applies the epilogue.
struct Pass {
  const Epilogue512& ep;
  bool resume, finish;
};

// R rows x V vectors of 16 columns at column j; `mask` selects the last vector's columns.
template <int R, int V>
[[gnu::noinline]] void tile(const float* a, int64_t lda, const float* const* b, int64_t j, float* c, int64_t ldc, int64_t k,
          const Pass& pass, int64_t row0, __mmask16 mask) {
  __m512 acc[R][V];
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) {
      const __mmask16 m = v == V - 1 ? mask : __mmask16(0xffff);
      acc[r][v] = pass.resume ? _mm512_maskz_loadu_ps(m, c + r * ldc + v * 16) : _mm512_setzero_ps();
    }
  for (int64_t p = 0; p < k; ++p) {
    const float* bp = b[p] + j;
    __m512 bv[V];
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) bv[v] = _mm512_maskz_loadu_ps(v == V - 1 ? mask : __mmask16(0xffff), bp + v * 16);
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
      const __m512 av = _mm512_set1_ps(a[r * lda + p]);
#pragma GCC unroll 4
      for (int v = 0; v < V; ++v) acc[r][v] = _mm512_fmadd_ps(av, bv[v], acc[r][v]);
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) {
      const __m512 x = pass.finish ? pass.ep(acc[r][v], row0 + r) : acc[r][v];
      _mm512_mask_storeu_ps(c + r * ldc + v * 16, v == V - 1 ? mask : __mmask16(0xffff), x);
    }
}

// R rows of columns [j, j + w), w <= 32.
template <int R>
void rows(const float* a, int64_t lda, const float* const* b, int64_t j, int64_t w, float* c, int64_t ldc, int64_t k,
          const Pass& pass, int64_t row0) {
  const __mmask16 mask = static_cast<__mmask16>((1u << (w > 16 ? w - 16 : w)) - 1u);
  if (w > 16) tile<R, 2>(a, lda, b, j, c + j, ldc, k, pass, row0, mask);
  else tile<R, 1>(a, lda, b, j, c + j, ldc, k, pass, row0, mask);
}

}  // namespace

void sgemm_rows_avx512(const float* a, int64_t lda, const float* const* b, float* c, int64_t ldc, int64_t m, int64_t n,
                       int64_t k, const Epilogue& e) {
  const Epilogue512 ep(e);
  sgemm_blocked<8, 32>(a, lda, b, c, ldc, m, n, k,
                       [&](auto r, const float* ai, const float* const* bk, int64_t j, int64_t w, float* ci, KBlock kb,
                           int64_t row0) {
                         rows<decltype(r)::value>(ai, lda, bk, j, w, ci, ldc, kb.k, Pass{ep, kb.resume, kb.finish}, row0);
                       });
}

void sgemm_avx512(const float* a, int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc, int64_t m, int64_t n,
                  int64_t k, const Epilogue& e) {
  sgemm_rows_avx512(a, lda, dense_rows(b, ldb, k), c, ldc, m, n, k, e);
}

}  // namespace minnow::kernels
