// Scale (and offset) searches that minimize a weighted squared error over one group of
// values: the step every type's quantizer shares once it has importance weights.
#pragma once
#include <cstdint>

namespace minnow::quant {

// Weights of the squared error for a group of n values. With importance: importance[i]
// (a column's mean squared activation: then the weighted error is the expected squared
// error of the matmul's output), or with TimesMagnitude importance[i] * sqrt(sigma2 + x_i^2)
// (llama.cpp's weighting: closer to the source for the symmetric 32-value types, not for
// the others; docs/quantize.md); without: sigma2 + x_i^2, where large weights, which move
// the outputs the most, are kept more exactly, and sigma2 keeps every weight above zero so
// that small values are not given up entirely. sigma2 is the mean square of the group, or
// of the whole row where the caller passes it (row_sigma2 >= 0: llama.cpp's choice for
// TimesMagnitude).
enum class ImportanceUse { Alone, TimesMagnitude };
void error_weights(const float* x, const float* importance, int n, float* w, ImportanceUse use = ImportanceUse::Alone,
                   float row_sigma2 = -1);
// Mean square of n values.
float mean_square(const float* x, int64_t n);

// x ~ scale * q with integer q in [qmin, qmax]. Tries inverse scales that put the value of
// largest magnitude near either end of the range, refits the scale by least squares for
// each rounding and keeps the best; then re-rounds with the winner until it stops
// improving. Writes q; returns the scale (0 when every x is 0). The scale may be negative
// (the value of largest magnitude then uses the longer side of an asymmetric range).
float fit_symmetric(const float* x, const float* w, int n, int qmin, int qmax, int8_t* q);

// x ~ scale * q + offset with q in [0, qmax] and scale >= 0; with offset_nonpositive the
// offset is kept <= 0 (K-quants store it as -dmin * m, m >= 0). Writes q.
struct AffineFit {
  float scale = 0, offset = 0;
};
AffineFit fit_affine(const float* x, const float* w, int n, int qmax, bool offset_nonpositive, uint8_t* q);

// v clamped to [lo, hi] and rounded to the nearest integer (ties to even: adding 1.5 * 2^23
// leaves no fraction bits; a libm call per value would cost more than the search).
inline int round_clamp(float v, int lo, int hi) {
  const float f = v < static_cast<float>(lo) ? static_cast<float>(lo) : v > static_cast<float>(hi) ? static_cast<float>(hi) : v;
  return static_cast<int>((f + 12582912.0f) - 12582912.0f);
}

}  // namespace minnow::quant
