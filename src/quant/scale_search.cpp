#include "quant/scale_search.hpp"

#include <cmath>
#include <initializer_list>

namespace minnow::quant {
namespace {

// Candidate inverse scales: the value of largest magnitude lands within +-kSteps * kStep
// of the range's end (finer steps gain little once each scale is refit).
constexpr int kSteps = 9;
constexpr float kStep = 0.1f;
constexpr int kRefinements = 3;
// Sums run in 8 lanes so that the compiler can vectorize them without reassociating
// (groups are 16 or 32 values; the weights are normalized, so float cannot overflow).
constexpr int kLanes = 8;

// v clamped to [lo, hi], then rounded to an integer (ties to even: adding 1.5 * 2^23
// leaves no fraction bits, and it is exact for |v| < 2^22).
inline float round_clamped(float v, float lo, float hi) {
  v = v < lo ? lo : v > hi ? hi : v;
  return (v + 12582912.0f) - 12582912.0f;
}

struct Moments {
  float sq = 0, sqq = 0, sqx = 0;  // sum(w q), sum(w q^2), sum(w q x)
};

// Rounds x * iscale (minus lo first) into [qmin, qmax] and returns the weighted moments.
template <bool kWithOffset>
Moments moments(const float* x, const float* w, int n, float iscale, float lo, float qmin, float qmax) {
  float sq[kLanes] = {}, sqq[kLanes] = {}, sqx[kLanes] = {};
  for (int i = 0; i < n; i += kLanes)
    for (int l = 0; l < kLanes; ++l) {
      const float xi = x[i + l], wi = w[i + l];
      const float q = round_clamped((kWithOffset ? xi - lo : xi) * iscale, qmin, qmax);
      sq[l] += wi * q, sqq[l] += wi * q * q, sqx[l] += wi * q * xi;
    }
  Moments m;
  for (int l = 0; l < kLanes; ++l) m.sq += sq[l], m.sqq += sqq[l], m.sqx += sqx[l];
  return m;
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

void error_weights(const float* x, const float* importance, int n, float* w) {
  float sum2 = 0, wmax = 0;
  for (int i = 0; i < n; ++i) sum2 += x[i] * x[i];
  const float sigma2 = sum2 / static_cast<float>(n);
  for (int i = 0; i < n; ++i) {
    const float v = sigma2 + x[i] * x[i];
    w[i] = importance ? importance[i] * std::sqrt(v) : v;
    wmax = std::fmax(wmax, w[i]);
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
    lo = std::fmin(lo, x[i]), hi = std::fmax(hi, x[i]);
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
