#include "quant/scale_search.hpp"

#include <cmath>
#include <cstring>
#include <initializer_list>

namespace minnow::quant {
namespace {

// Candidate inverse scales: the value of largest magnitude lands within +-kSteps * kStep
// of the range's end (finer steps gain little once each scale is refit).
constexpr int kSteps = 9;
constexpr float kStep = 0.1f;
constexpr int kRefinements = 3;
// Groups are 8, 16 or 32 values, taken 4 lanes at a time (GCC/Clang vector extensions:
// SSE on x86-64, NEON on aarch64; 16 bytes, the baseline of both). The weights are normalized, so float sums cannot
// overflow.
constexpr int kLanes = 4;
typedef float F4 __attribute__((vector_size(16)));

inline F4 load4(const float* p) {
  F4 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline float sum4(F4 v) {
  float s = 0;
  for (int l = 0; l < kLanes; ++l) s += v[l];
  return s;
}

// v clamped to [lo, hi], then rounded to an integer (ties to even: adding 1.5 * 2^23
// leaves no fraction bits, and it is exact for |v| < 2^22).
inline float round_clamped(float v, float lo, float hi) {
  v = v < lo ? lo : v > hi ? hi : v;
  return (v + 12582912.0f) - 12582912.0f;
}
inline F4 round_clamped(F4 v, F4 lo, F4 hi) {
  v = v < lo ? lo : v;
  v = v > hi ? hi : v;
  const F4 magic = F4{} + 12582912.0f;
  return (v + magic) - magic;
}

struct Moments {
  float sq = 0, sqq = 0, sqx = 0;  // sum(w q), sum(w q^2), sum(w q x)
};

// Rounds (x - origin) * iscale into [qmin, qmax] and returns the weighted moments.
template <bool kWithOffset>
Moments moments(const float* x, const float* w, int n, float iscale, float origin, float qmin, float qmax) {
  const F4 vs = F4{} + iscale, vo = F4{} + origin, vlo = F4{} + qmin, vhi = F4{} + qmax;
  F4 sq = {}, sqq = {}, sqx = {};
  for (int i = 0; i < n; i += kLanes) {
    const F4 xi = load4(x + i), wi = load4(w + i);
    const F4 q = round_clamped((kWithOffset ? xi - vo : xi) * vs, vlo, vhi);
    const F4 wq = wi * q;
    sq += wq, sqq += wq * q, sqx += wq * xi;
  }
  return {sum4(sq), sum4(sqq), sum4(sqx)};
}

// Best (s, b) for the rounding behind m, within the constraints, and the weighted squared
// error it leaves (sw, sx, sxx: sum(w), sum(w x), sum(w x^2)).
float fit_moments(const Moments& m, float sw, float sx, float sxx, bool offset_nonpositive, AffineFit* f) {
  float s = 0, b = sw > 0 ? sx / sw : 0;
  const float det = sw * m.sqq - m.sq * m.sq;
  if (det > 0) {
    s = (sw * m.sqx - m.sq * sx) / det;
    b = (m.sqq * sx - m.sq * m.sqx) / det;
  }
  if (offset_nonpositive && b > 0) b = 0, s = m.sqq > 0 ? m.sqx / m.sqq : 0;
  if (s < 0) s = 0, b = sw > 0 ? sx / sw : 0;
  if (offset_nonpositive && b > 0) b = 0;
  f->scale = s, f->offset = b;
  // sum(w (s q + b - x)^2), expanded.
  return sxx + s * s * m.sqq + b * b * sw + 2 * s * b * m.sq - 2 * s * m.sqx - 2 * b * sx;
}

}  // namespace

float mean_square(const float* x, int64_t n) {
  float sum2 = 0;
  for (int64_t i = 0; i < n; ++i) sum2 += x[i] * x[i];
  return n > 0 ? sum2 / static_cast<float>(n) : 0.0f;
}

void error_weights(const float* x, const float* importance, int n, float* w, ImportanceUse use, float row_sigma2) {
  float wmax = 0;
  const float sigma2 = row_sigma2 >= 0 ? row_sigma2 : mean_square(x, n);
  for (int i = 0; i < n; ++i) {
    const float v = sigma2 + x[i] * x[i];
    // With importance alone, the mean squared activation of each column: the expected squared
    // error of the matmul's output (uncorrelated activations). Which use wins depends on the
    // type (docs/quantize.md, importance matrix section).
    w[i] = importance == nullptr ? v : use == ImportanceUse::TimesMagnitude ? importance[i] * std::sqrt(v) : importance[i];
    wmax = w[i] > wmax ? w[i] : wmax;
  }
  // Only ratios matter to the searches; a maximum of 1 keeps their float sums in range.
  if (wmax > 0 && std::isfinite(wmax)) {
    const float inv = 1.0f / wmax;
    for (int i = 0; i < n; ++i) w[i] *= inv;
  } else {
    for (int i = 0; i < n; ++i) w[i] = 1.0f;
  }
}

float fit_symmetric(const float* x, const float* w, int n, int qmin, int qmax, int8_t* q) {
  float amax = 0, m = 0;
  for (int i = 0; i < n; ++i)
    if (std::fabs(x[i]) > amax) amax = std::fabs(x[i]), m = x[i];
  const float lo = static_cast<float>(qmin), hi = static_cast<float>(qmax);
  auto write_q = [&](float iscale) {
    for (int i = 0; i < n; ++i) q[i] = static_cast<int8_t>(round_clamped(x[i] * iscale, lo, hi));
  };
  if (amax == 0) {
    write_q(0);
    return 0;
  }
  // The error left by the best scale for a rounding is sum(wxx) - sum(wqx)^2 / sum(wqq):
  // the best rounding maximizes sum(wqx)^2 / sum(wqq).
  float best = -1, best_scale = 0, best_iscale = 0;
  auto consider = [&](float iscale) {
    const Moments mo = n % kLanes ? Moments{} : moments<false>(x, w, n, iscale, 0, lo, hi);
    if (!(mo.sqq > 0)) return false;
    const float score = mo.sqx * mo.sqx / mo.sqq;
    if (!(score > best)) return false;
    best = score, best_scale = mo.sqx / mo.sqq, best_iscale = iscale;
    return true;
  };
  for (int end : {qmin, qmax}) {
    if (end == 0) continue;
    const float sign = end < 0 ? -1.0f : 1.0f;
    for (int k = -kSteps; k <= kSteps; ++k) consider((static_cast<float>(end) + sign * kStep * static_cast<float>(k)) / m);
  }
  if (best < 0) {  // all weights zero (or a group size the lanes do not divide): plain max scaling
    const float d = m / (qmin < 0 && -qmin > qmax ? lo : hi);
    write_q(1.0f / d);
    return d;
  }
  for (int r = 0; r < kRefinements && best_scale != 0; ++r)
    if (!consider(1.0f / best_scale)) break;
  write_q(best_iscale);
  return best_scale;
}

AffineFit fit_affine(const float* x, const float* w, int n, int qmax, bool offset_nonpositive, uint8_t* q) {
  float lo = x[0], hi = x[0], sw = 0, sx = 0, sxx = 0;
  for (int i = 0; i < n; ++i) {
    lo = x[i] < lo ? x[i] : lo, hi = x[i] > hi ? x[i] : hi;
    sw += w[i], sx += w[i] * x[i], sxx += w[i] * x[i] * x[i];
  }
  if (offset_nonpositive) lo = std::fmin(lo, 0.0f);
  const float top = static_cast<float>(qmax);
  AffineFit best;
  if (hi == lo || n % kLanes) {  // constant group: the offset alone holds it
    for (int i = 0; i < n; ++i) q[i] = 0;
    best.offset = lo;
    return best;
  }
  // Candidates round (x - lo) * iscale; a refinement rounds (x - offset) / scale.
  float best_err = INFINITY, best_iscale = 0, best_origin = lo;
  auto consider = [&](float iscale, float origin) {
    const Moments mo = moments<true>(x, w, n, iscale, origin, 0, top);
    AffineFit f;
    const float err = fit_moments(mo, sw, sx, sxx, offset_nonpositive, &f);
    if (!(err < best_err)) return false;
    best_err = err, best = f, best_iscale = iscale, best_origin = origin;
    return true;
  };
  const float range = hi - lo;
  for (int k = -kSteps; k <= kSteps; ++k) consider((top + kStep * static_cast<float>(k)) / range, lo);
  for (int r = 0; r < kRefinements && best.scale > 0; ++r)
    if (!consider(1.0f / best.scale, best.offset)) break;
  for (int i = 0; i < n; ++i) q[i] = static_cast<uint8_t>(round_clamped((x[i] - best_origin) * best_iscale, 0, top));
  return best;
}

}  // namespace minnow::quant
