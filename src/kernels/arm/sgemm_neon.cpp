// The convolution kernels (kernels/ops.hpp: sgemm, sgemm_rows, depthwise_row, depthwise8_row,
// pointwise8, pointwise16, interleave8, deinterleave8) with
// baseline NEON: register tiles of 8 rows x 2 vectors of 4 columns (16 sums of the 32
// registers), each A value multiplied by lane, in the shared loop nest
// (kernels/sgemm_blocking.hpp). Sums are the same fused multiply-add chains in k order as
// the scalar reference's; columns past the last full vector take the scalar form.
#include <algorithm>
#include <cmath>

#include "kernels/arm/neon.hpp"
#include "kernels/sgemm_blocking.hpp"

namespace minnow::kernels {

namespace {

struct EpilogueNeon {
  const Epilogue& e;
  float32x4_t lo, hi;
  explicit EpilogueNeon(const Epilogue& ep) : e(ep), lo(vdupq_n_f32(ep.lo)), hi(vdupq_n_f32(ep.hi)) {}
  // apply_epilogue's operations in its order; a NaN stays NaN as in the scalar form.
  float32x4_t operator()(float32x4_t v, int64_t r) const {
    if (e.bias) v = vaddq_f32(v, vdupq_n_f32(e.bias[r]));
    v = vbslq_f32(vcltq_f32(v, lo), lo, vbslq_f32(vcgtq_f32(v, hi), hi, v));
    if (e.hard_swish) {
      float32x4_t g = vaddq_f32(vmulq_n_f32(v, 1.0f / 6), vdupq_n_f32(0.5f));
      g = vbslq_f32(vcltq_f32(g, vdupq_n_f32(0.0f)), vdupq_n_f32(0.0f), vbslq_f32(vcgtq_f32(g, vdupq_n_f32(1.0f)), vdupq_n_f32(1.0f), g));
      v = vaddq_f32(vmulq_n_f32(vmulq_f32(v, g), e.scale), vdupq_n_f32(e.shift));
    }
    return v;
  }
};

// R rows x V vectors of 4 columns at column j; resume continues the sums stored in C,
// finish applies the epilogue.
template <int R, int V>
[[gnu::noinline]] void tile(const float* a, int64_t lda, const float* const* b, int64_t j, float* c, int64_t ldc, int64_t k,
          const EpilogueNeon& ep, bool resume, bool finish, int64_t row0) {
  float32x4_t acc[R][V];
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < V; ++v) acc[r][v] = resume ? vld1q_f32(c + r * ldc + v * 4) : vdupq_n_f32(0.0f);
  for (int64_t p = 0; p < k; ++p) {
    const float* bp = b[p] + j;
    float32x4_t bv[V];
    for (int v = 0; v < V; ++v) bv[v] = vld1q_f32(bp + v * 4);
    for (int r = 0; r < R; ++r) {
      const float av = a[r * lda + p];
      for (int v = 0; v < V; ++v) acc[r][v] = vfmaq_n_f32(acc[r][v], bv[v], av);
    }
  }
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < V; ++v) vst1q_f32(c + r * ldc + v * 4, finish ? ep(acc[r][v], row0 + r) : acc[r][v]);
}

// The columns [j, j + w) of R rows: the scalar form, resumed like the tiles.
template <int R>
void tail(const float* a, int64_t lda, const float* const* b, int64_t j, int64_t w, float* c, int64_t ldc, int64_t k,
          const Epilogue& e, bool resume, bool finish, int64_t row0) {
  for (int64_t i = 0; i < R; ++i)
    for (int64_t jj = j; jj < j + w; ++jj) {
      float acc = resume ? c[i * ldc + jj] : 0.0f;
      for (int64_t p = 0; p < k; ++p) acc = std::fma(a[i * lda + p], b[p][jj], acc);
      c[i * ldc + jj] = finish ? apply_epilogue(acc, e, row0 + i) : acc;
    }
}

// R rows of the columns [j, j + w), w <= 8: whole vectors by tiles, the rest by the scalar form.
template <int R>
void rows(const float* a, int64_t lda, const float* const* b, int64_t j, int64_t w, float* c, int64_t ldc, int64_t k,
          const EpilogueNeon& ep, bool resume, bool finish, int64_t row0) {
  const int64_t vec = w / 4 * 4;
  if (vec == 8) tile<R, 2>(a, lda, b, j, c + j, ldc, k, ep, resume, finish, row0);
  else if (vec == 4) tile<R, 1>(a, lda, b, j, c + j, ldc, k, ep, resume, finish, row0);
  if (vec < w) tail<R>(a, lda, b, j + vec, w - vec, c, ldc, k, ep.e, resume, finish, row0);
}

void sgemm_rows_neon(const float* a, int64_t lda, const float* const* b, float* c, int64_t ldc, int64_t m, int64_t n,
                     int64_t k, const Epilogue& e) {
  const EpilogueNeon ep(e);
  sgemm_blocked<8, 8>(a, lda, b, c, ldc, m, n, k,
                      [&](auto r, const float* ai, const float* const* bk, int64_t j, int64_t w, float* ci, KBlock kb,
                          int64_t row0) {
                        rows<decltype(r)::value>(ai, lda, bk, j, w, ci, ldc, kb.k, ep, kb.resume, kb.finish, row0);
                      });
}

void sgemm_neon(const float* a, int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc, int64_t m, int64_t n,
                int64_t k, const Epilogue& e) {
  sgemm_rows_neon(a, lda, dense_rows(b, ldb, k), c, ldc, m, n, k, e);
}

// Four outputs of stride S at x + o * S (vld2 splits even and odd lanes for S = 2).
template <int S>
inline float32x4_t taps4(const float* p) {
  if constexpr (S == 1) return vld1q_f32(p);
  else return vld2q_f32(p).val[0];
}

template <int S>
int64_t depthwise_neon(const float* x, int64_t ldx, const float* w, int kh, int kw, float* y, int64_t n,
                       const EpilogueNeon& ep) {
  int64_t o = 0;
  for (; o + 16 <= n; o += 16) {  // four vectors per broadcast weight
    float32x4_t a0 = vdupq_n_f32(0.0f), a1 = a0, a2 = a0, a3 = a0;
    for (int i = 0; i < kh; ++i) {
      const float* row = x + i * ldx + o * S;
      for (int j = 0; j < kw; ++j) {
        const float wv = w[i * kw + j];
        a0 = vfmaq_n_f32(a0, taps4<S>(row + j), wv);
        a1 = vfmaq_n_f32(a1, taps4<S>(row + j + 4 * S), wv);
        a2 = vfmaq_n_f32(a2, taps4<S>(row + j + 8 * S), wv);
        a3 = vfmaq_n_f32(a3, taps4<S>(row + j + 12 * S), wv);
      }
    }
    vst1q_f32(y + o, ep(a0, 0));
    vst1q_f32(y + o + 4, ep(a1, 0));
    vst1q_f32(y + o + 8, ep(a2, 0));
    vst1q_f32(y + o + 12, ep(a3, 0));
  }
  for (; o + 4 <= n; o += 4) {
    float32x4_t acc = vdupq_n_f32(0.0f);
    for (int i = 0; i < kh; ++i) {
      const float* row = x + i * ldx + o * S;
      for (int j = 0; j < kw; ++j) acc = vfmaq_n_f32(acc, taps4<S>(row + j), w[i * kw + j]);
    }
    vst1q_f32(y + o, ep(acc, 0));
  }
  return o;
}

void depthwise_row_neon(const float* x, int64_t ldx, const float* w, int kh, int kw, int stride, float* y, int64_t n,
                        const Epilogue& e) {
  const EpilogueNeon ep(e);
  int64_t o = 0;
  if (stride == 1) o = depthwise_neon<1>(x, ldx, w, kh, kw, y, n, ep);
  else if (stride == 2) o = depthwise_neon<2>(x, ldx, w, kh, kw, y, n, ep);
  for (; o < n; ++o) {  // the tail, in the reference's order
    float acc = 0;
    for (int i = 0; i < kh; ++i)
      for (int j = 0; j < kw; ++j) acc = std::fma(w[i * kw + j], x[i * ldx + o * stride + j], acc);
    y[o] = apply_epilogue(acc, e, 0);
  }
}

// Eight channels per pixel as two vectors, one fused multiply-add per tap and half, in
// the reference's (i, j) order; the bias is per lane.
void depthwise8_row_neon(const float* x, int64_t ldx, const float* w, int kh, int kw, int stride, float* y, int64_t n,
                         const Epilogue& e) {
  Epilogue rest = e;
  rest.bias = nullptr;
  const EpilogueNeon ep(rest);
  const float32x4_t b0 = e.bias ? vld1q_f32(e.bias) : vdupq_n_f32(0.0f), b1 = e.bias ? vld1q_f32(e.bias + 4) : b0;
  for (int64_t o = 0; o < n; ++o) {
    float32x4_t a0 = vdupq_n_f32(0.0f), a1 = a0;
    for (int i = 0; i < kh; ++i)
      for (int j = 0; j < kw; ++j) {
        const float* p = x + (i * ldx + o * stride + j) * 8;
        const float* wt = w + (i * kw + j) * 8;
        a0 = vfmaq_f32(a0, vld1q_f32(wt), vld1q_f32(p));
        a1 = vfmaq_f32(a1, vld1q_f32(wt + 4), vld1q_f32(p + 4));
      }
    if (e.bias) a0 = vaddq_f32(a0, b0), a1 = vaddq_f32(a1, b1);
    vst1q_f32(y + o * 8, ep(a0, 0));
    vst1q_f32(y + o * 8 + 4, ep(a1, 0));
  }
}

// A 1 x 1 convolution's 8 channels: four pixels a pass, each two vectors of sums.
void pointwise8_neon(const float* x, int64_t ldx, const float* w, int64_t k, float* y, int64_t n, const Epilogue& e) {
  Epilogue rest = e;
  rest.bias = nullptr;
  const EpilogueNeon ep(rest);
  const float32x4_t b0 = e.bias ? vld1q_f32(e.bias) : vdupq_n_f32(0.0f), b1 = e.bias ? vld1q_f32(e.bias + 4) : b0;
  auto store = [&](float* yp, float32x4_t lo, float32x4_t hi) {
    if (e.bias) lo = vaddq_f32(lo, b0), hi = vaddq_f32(hi, b1);
    vst1q_f32(yp, ep(lo, 0));
    vst1q_f32(yp + 4, ep(hi, 0));
  };
  int64_t p = 0;
  for (; p + 4 <= n; p += 4) {
    float32x4_t a[8];
    for (auto& v : a) v = vdupq_n_f32(0.0f);
    for (int64_t c = 0; c < k; ++c) {
      const float32x4_t w0 = vld1q_f32(w + c * 8), w1 = vld1q_f32(w + c * 8 + 4), xv = vld1q_f32(x + c * ldx + p);
      a[0] = vfmaq_laneq_f32(a[0], w0, xv, 0), a[1] = vfmaq_laneq_f32(a[1], w1, xv, 0);
      a[2] = vfmaq_laneq_f32(a[2], w0, xv, 1), a[3] = vfmaq_laneq_f32(a[3], w1, xv, 1);
      a[4] = vfmaq_laneq_f32(a[4], w0, xv, 2), a[5] = vfmaq_laneq_f32(a[5], w1, xv, 2);
      a[6] = vfmaq_laneq_f32(a[6], w0, xv, 3), a[7] = vfmaq_laneq_f32(a[7], w1, xv, 3);
    }
    for (int i = 0; i < 4; ++i) store(y + (p + i) * 8, a[2 * i], a[2 * i + 1]);
  }
  for (; p < n; ++p) {
    float32x4_t lo = vdupq_n_f32(0.0f), hi = lo;
    for (int64_t c = 0; c < k; ++c) {
      const float32x4_t xv = vdupq_n_f32(x[c * ldx + p]);
      lo = vfmaq_f32(lo, vld1q_f32(w + c * 8), xv), hi = vfmaq_f32(hi, vld1q_f32(w + c * 8 + 4), xv);
    }
    store(y + p * 8, lo, hi);
  }
}

void pointwise16_neon(const float* x, int64_t ldx, const float* w0, const float* w1, int64_t k, float* y0, float* y1,
                      int64_t n, const Epilogue& e0, const Epilogue& e1) {
  pointwise8_neon(x, ldx, w0, k, y0, n, e0);
  pointwise8_neon(x, ldx, w1, k, y1, n, e1);
}

// Transposes r[0..3] in place (row i, lane j -> row j, lane i).
inline void transpose4(float32x4_t r[4]) {
  const float32x4_t t0 = vtrn1q_f32(r[0], r[1]), t1 = vtrn2q_f32(r[0], r[1]);
  const float32x4_t t2 = vtrn1q_f32(r[2], r[3]), t3 = vtrn2q_f32(r[2], r[3]);
  auto d = [](float32x4_t v) { return vreinterpretq_f64_f32(v); };
  r[0] = vreinterpretq_f32_f64(vtrn1q_f64(d(t0), d(t2)));
  r[1] = vreinterpretq_f32_f64(vtrn1q_f64(d(t1), d(t3)));
  r[2] = vreinterpretq_f32_f64(vtrn2q_f64(d(t0), d(t2)));
  r[3] = vreinterpretq_f32_f64(vtrn2q_f64(d(t1), d(t3)));
}

// Planes <-> 8 interleaved channels by 4 x 4 transposes, 4 pixels at a time.
void interleave8_neon(const float* src, int64_t ld, int lanes, int64_t n, float* dst) {
  int64_t p = 0;
  if (lanes == 8) {
    for (; p + 4 <= n; p += 4)
      for (int h = 0; h < 2; ++h) {
        float32x4_t r[4];
        for (int l = 0; l < 4; ++l) r[l] = vld1q_f32(src + (h * 4 + l) * ld + p);
        transpose4(r);
        for (int i = 0; i < 4; ++i) vst1q_f32(dst + (p + i) * 8 + h * 4, r[i]);
      }
  }
  interleave8_ref(src + p, ld, lanes, n - p, dst + p * 8);
}

void deinterleave8_neon(const float* src, int lanes, int64_t n, float* dst, int64_t ld) {
  int64_t p = 0;
  if (lanes == 8) {
    for (; p + 4 <= n; p += 4)
      for (int h = 0; h < 2; ++h) {
        float32x4_t r[4];
        for (int i = 0; i < 4; ++i) r[i] = vld1q_f32(src + (p + i) * 8 + h * 4);
        transpose4(r);
        for (int l = 0; l < 4; ++l) vst1q_f32(dst + (h * 4 + l) * ld + p, r[l]);
      }
  }
  deinterleave8_ref(src + p * 8, lanes, n - p, dst + p, ld);
}

}  // namespace

void set_neon_convolution(KernelTable& t) {
  t.sgemm = sgemm_neon;
  t.sgemm_rows = sgemm_rows_neon;
  t.depthwise_row = depthwise_row_neon;
  t.depthwise8_row = depthwise8_row_neon;
  t.pointwise8 = pointwise8_neon;
  t.pointwise16 = pointwise16_neon;
  t.interleave8 = interleave8_neon;
  t.deinterleave8 = deinterleave8_neon;
}

}  // namespace minnow::kernels
