// Convolution 8 channels at a time (kernels/ops.hpp: depthwise8_row, pointwise8,
// pointwise16, interleave8, deinterleave8) with AVX2 + FMA: one vector is one pixel's 8 channels, so
// every depthwise tap is one load and one fused multiply-add whatever the plane's width, and
// a 1 x 1 convolution one weight vector times a broadcast input a pixel; planes go in and
// out of that layout by 8 x 8 transposes.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/ops.hpp"

namespace minnow::kernels {

namespace {

// Transposes r[0..7] in place (row i, lane j -> row j, lane i).
inline void transpose8(__m256 r[8]) {
  __m256 t[8], u[8];
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 8; i += 4) {
    u[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
    u[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xEE);
    u[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
    u[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
  }
  for (int i = 0; i < 4; ++i) {
    r[i] = _mm256_permute2f128_ps(u[i], u[i + 4], 0x20);
    r[i + 4] = _mm256_permute2f128_ps(u[i], u[i + 4], 0x31);
  }
}

// The epilogue with one bias per lane (apply_epilogue's operations, in its order).
struct LaneEpilogue {
  __m256 bias, lo, hi, sixth = _mm256_set1_ps(1.0f / 6), half = _mm256_set1_ps(0.5f), zero = _mm256_setzero_ps(),
                       one = _mm256_set1_ps(1.0f), scale, shift;
  bool has_bias, hard_swish;
  explicit LaneEpilogue(const Epilogue& e)
      : bias(e.bias ? _mm256_loadu_ps(e.bias) : _mm256_setzero_ps()), lo(_mm256_set1_ps(e.lo)), hi(_mm256_set1_ps(e.hi)),
        scale(_mm256_set1_ps(e.scale)), shift(_mm256_set1_ps(e.shift)), has_bias(e.bias != nullptr),
        hard_swish(e.hard_swish) {}
  __m256 operator()(__m256 v) const {
    if (has_bias) v = _mm256_add_ps(v, bias);
    v = _mm256_min_ps(_mm256_max_ps(v, lo), hi);
    if (hard_swish) {
      __m256 g = _mm256_min_ps(_mm256_max_ps(_mm256_add_ps(_mm256_mul_ps(v, sixth), half), zero), one);
      v = _mm256_add_ps(_mm256_mul_ps(_mm256_mul_ps(v, g), scale), shift);
    }
    return v;
  }
};

// Four outputs per pass (four independent sums hide the multiply-add latency), the taps'
// weights held in registers for the usual 3 x 3 window (KH = KW = 3) or loaded otherwise.
template <int KH, int KW>
void rows8(const float* x, int64_t ldx, const float* w, int kh, int kw, int stride, float* y, int64_t n,
           const LaneEpilogue& ep) {
  constexpr bool kFixed = KH > 0;
  __m256 wv[kFixed ? KH * KW : 1];
  if constexpr (kFixed)
    for (int t = 0; t < KH * KW; ++t) wv[t] = _mm256_loadu_ps(w + t * 8);
  if constexpr (kFixed) kh = KH, kw = KW;
  const int64_t step = stride * 8;
  int64_t o = 0;
  for (; o + 4 <= n; o += 4) {
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    for (int i = 0; i < kh; ++i) {
      const float* row = x + (i * ldx + o * stride) * 8;
      for (int j = 0; j < kw; ++j) {
        const __m256 wt = kFixed ? wv[i * KW + j] : _mm256_loadu_ps(w + (i * kw + j) * 8);
        const float* p = row + j * 8;
        a0 = _mm256_fmadd_ps(wt, _mm256_loadu_ps(p), a0);
        a1 = _mm256_fmadd_ps(wt, _mm256_loadu_ps(p + step), a1);
        a2 = _mm256_fmadd_ps(wt, _mm256_loadu_ps(p + 2 * step), a2);
        a3 = _mm256_fmadd_ps(wt, _mm256_loadu_ps(p + 3 * step), a3);
      }
    }
    _mm256_storeu_ps(y + o * 8, ep(a0));
    _mm256_storeu_ps(y + o * 8 + 8, ep(a1));
    _mm256_storeu_ps(y + o * 8 + 16, ep(a2));
    _mm256_storeu_ps(y + o * 8 + 24, ep(a3));
  }
  for (; o < n; ++o) {
    __m256 acc = _mm256_setzero_ps();
    for (int i = 0; i < kh; ++i)
      for (int j = 0; j < kw; ++j)
        acc = _mm256_fmadd_ps(_mm256_loadu_ps(w + (i * kw + j) * 8), _mm256_loadu_ps(x + (i * ldx + o * stride + j) * 8), acc);
    _mm256_storeu_ps(y + o * 8, ep(acc));
  }
}

}  // namespace

void depthwise8_row_avx2(const float* x, int64_t ldx, const float* w, int kh, int kw, int stride, float* y, int64_t n,
                         const Epilogue& e) {
  const LaneEpilogue ep(e);
  if (kh == 3 && kw == 3) rows8<3, 3>(x, ldx, w, kh, kw, stride, y, n, ep);
  else rows8<0, 0>(x, ldx, w, kh, kw, stride, y, n, ep);
}

// Twelve pixels a pass (twelve sums, the weight vector and a broadcast: 14 of the 16
// registers), then four, then one.
void pointwise8_avx2(const float* x, int64_t ldx, const float* w, int64_t k, float* y, int64_t n, const Epilogue& e) {
  const LaneEpilogue ep(e);
  int64_t p = 0;
  for (; p + 12 <= n; p += 12) {
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0, a8 = a0, a9 = a0,
           a10 = a0, a11 = a0;
    const float* xc = x + p;
    for (int64_t c = 0; c < k; ++c, xc += ldx) {
      const __m256 wc = _mm256_loadu_ps(w + c * 8);
      a0 = _mm256_fmadd_ps(wc, _mm256_broadcast_ss(xc), a0);
      a1 = _mm256_fmadd_ps(wc, _mm256_broadcast_ss(xc + 1), a1);
      a2 = _mm256_fmadd_ps(wc, _mm256_broadcast_ss(xc + 2), a2);
      a3 = _mm256_fmadd_ps(wc, _mm256_broadcast_ss(xc + 3), a3);
      a4 = _mm256_fmadd_ps(wc, _mm256_broadcast_ss(xc + 4), a4);
      a5 = _mm256_fmadd_ps(wc, _mm256_broadcast_ss(xc + 5), a5);
      a6 = _mm256_fmadd_ps(wc, _mm256_broadcast_ss(xc + 6), a6);
      a7 = _mm256_fmadd_ps(wc, _mm256_broadcast_ss(xc + 7), a7);
      a8 = _mm256_fmadd_ps(wc, _mm256_broadcast_ss(xc + 8), a8);
      a9 = _mm256_fmadd_ps(wc, _mm256_broadcast_ss(xc + 9), a9);
      a10 = _mm256_fmadd_ps(wc, _mm256_broadcast_ss(xc + 10), a10);
      a11 = _mm256_fmadd_ps(wc, _mm256_broadcast_ss(xc + 11), a11);
    }
    float* yp = y + p * 8;
    for (const __m256 v : {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11}) {
      _mm256_storeu_ps(yp, ep(v));
      yp += 8;
    }
  }
  for (; p + 4 <= n; p += 4) {
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    const float* xc = x + p;
    for (int64_t c = 0; c < k; ++c, xc += ldx) {
      const __m256 wc = _mm256_loadu_ps(w + c * 8);
      a0 = _mm256_fmadd_ps(wc, _mm256_broadcast_ss(xc), a0);
      a1 = _mm256_fmadd_ps(wc, _mm256_broadcast_ss(xc + 1), a1);
      a2 = _mm256_fmadd_ps(wc, _mm256_broadcast_ss(xc + 2), a2);
      a3 = _mm256_fmadd_ps(wc, _mm256_broadcast_ss(xc + 3), a3);
    }
    _mm256_storeu_ps(y + p * 8, ep(a0));
    _mm256_storeu_ps(y + p * 8 + 8, ep(a1));
    _mm256_storeu_ps(y + p * 8 + 16, ep(a2));
    _mm256_storeu_ps(y + p * 8 + 24, ep(a3));
  }
  for (; p < n; ++p) {
    __m256 a = _mm256_setzero_ps();
    for (int64_t c = 0; c < k; ++c) a = _mm256_fmadd_ps(_mm256_loadu_ps(w + c * 8), _mm256_broadcast_ss(x + c * ldx + p), a);
    _mm256_storeu_ps(y + p * 8, ep(a));
  }
}

namespace {

// Six pixels of pointwise8 for 16 filters at once (two blocks of 8, y0 and y1): each
// broadcast input feeds two weight vectors (12 sums), so 8 loads per 12 multiply-adds.
void six_pixels16(const float* x, int64_t ldx, const float* w0, const float* w1, int64_t k, float* y0, float* y1,
                  const LaneEpilogue& ep0, const LaneEpilogue& ep1) {
  __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, b0 = a0, b1 = a0, b2 = a0, b3 = a0,
         b4 = a0, b5 = a0;
  const float* xc = x;
  for (int64_t c = 0; c < k; ++c, xc += ldx) {
    const __m256 u = _mm256_loadu_ps(w0 + c * 8), v = _mm256_loadu_ps(w1 + c * 8);
    __m256 xb = _mm256_broadcast_ss(xc);
    a0 = _mm256_fmadd_ps(u, xb, a0), b0 = _mm256_fmadd_ps(v, xb, b0);
    xb = _mm256_broadcast_ss(xc + 1);
    a1 = _mm256_fmadd_ps(u, xb, a1), b1 = _mm256_fmadd_ps(v, xb, b1);
    xb = _mm256_broadcast_ss(xc + 2);
    a2 = _mm256_fmadd_ps(u, xb, a2), b2 = _mm256_fmadd_ps(v, xb, b2);
    xb = _mm256_broadcast_ss(xc + 3);
    a3 = _mm256_fmadd_ps(u, xb, a3), b3 = _mm256_fmadd_ps(v, xb, b3);
    xb = _mm256_broadcast_ss(xc + 4);
    a4 = _mm256_fmadd_ps(u, xb, a4), b4 = _mm256_fmadd_ps(v, xb, b4);
    xb = _mm256_broadcast_ss(xc + 5);
    a5 = _mm256_fmadd_ps(u, xb, a5), b5 = _mm256_fmadd_ps(v, xb, b5);
  }
  float *q0 = y0, *q1 = y1;
  for (const __m256 v : {a0, a1, a2, a3, a4, a5}) _mm256_storeu_ps(q0, ep0(v)), q0 += 8;
  for (const __m256 v : {b0, b1, b2, b3, b4, b5}) _mm256_storeu_ps(q1, ep1(v)), q1 += 8;
}

}  // namespace

// pointwise8 for 16 filters: six pixels a pass; the last 1-5 pixels too, their inputs
// first copied into six zero-padded columns (the narrower loops of pointwise8 run a chain
// of dependent multiply-adds: a row of 80 pixels spent a fifth of its time on its last 2).
void pointwise16_avx2(const float* x, int64_t ldx, const float* w0, const float* w1, int64_t k, float* y0, float* y1,
                      int64_t n, const Epilogue& e0, const Epilogue& e1) {
  const LaneEpilogue ep0(e0), ep1(e1);
  int64_t p = 0;
  for (; p + 6 <= n; p += 6) six_pixels16(x + p, ldx, w0, w1, k, y0 + p * 8, y1 + p * 8, ep0, ep1);
  if (p == n) return;
  const int64_t r = n - p;
  thread_local std::vector<float> cols;
  cols.resize(static_cast<size_t>(6 * k));
  for (int64_t c = 0; c < k; ++c)
    for (int64_t i = 0; i < 6; ++i) cols[static_cast<size_t>(c * 6 + i)] = i < r ? x[c * ldx + p + i] : 0.0f;
  alignas(32) float t0[48], t1[48];
  six_pixels16(cols.data(), 6, w0, w1, k, t0, t1, ep0, ep1);
  std::copy_n(t0, r * 8, y0 + p * 8);
  std::copy_n(t1, r * 8, y1 + p * 8);
}

void interleave8_avx2(const float* src, int64_t ld, int lanes, int64_t n, float* dst) {
  int64_t p = 0;
  if (lanes == 8) {
    for (; p + 8 <= n; p += 8) {
      __m256 r[8];
      for (int l = 0; l < 8; ++l) r[l] = _mm256_loadu_ps(src + l * ld + p);
      transpose8(r);
      for (int i = 0; i < 8; ++i) _mm256_storeu_ps(dst + (p + i) * 8, r[i]);
    }
  }
  interleave8_ref(src + p, ld, lanes, n - p, dst + p * 8);
}

void deinterleave8_avx2(const float* src, int lanes, int64_t n, float* dst, int64_t ld) {
  int64_t p = 0;
  if (lanes == 8) {
    for (; p + 8 <= n; p += 8) {
      __m256 r[8];
      for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(src + (p + i) * 8);
      transpose8(r);
      for (int l = 0; l < 8; ++l) _mm256_storeu_ps(dst + l * ld + p, r[l]);
    }
  }
  deinterleave8_ref(src + p * 8, lanes, n - p, dst + p, ld);
}

}  // namespace minnow::kernels
