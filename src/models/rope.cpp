#include "models/rope.hpp"

#include <cmath>

#include "kernels/ops.hpp"

namespace minnow {

std::vector<float> rope_inv_freq(int head_dim, float base, const RopeScaling& scaling,
                                 const std::vector<float>& freq_factors) {
  const int half = head_dim / 2;
  std::vector<float> inv(static_cast<size_t>(half));
  for (int i = 0; i < half; ++i) {
    double f = std::pow(static_cast<double>(base), -2.0 * i / head_dim);
    switch (scaling.type) {
      case RopeScaling::Type::None: break;
      case RopeScaling::Type::Linear: f /= scaling.factor; break;
      case RopeScaling::Type::Llama3: {
        // Long wavelengths are slowed by `factor`, short ones kept, the band between
        // blended (Llama 3.1's published rule).
        const double pi = 3.14159265358979323846;
        const double wavelen = 2 * pi / f;
        const double low_wavelen = scaling.original_ctx / scaling.low_freq_factor;
        const double high_wavelen = scaling.original_ctx / scaling.high_freq_factor;
        if (wavelen > low_wavelen) {
          f /= scaling.factor;
        } else if (wavelen >= high_wavelen) {
          const double smooth = (scaling.original_ctx / wavelen - scaling.low_freq_factor) /
                                (scaling.high_freq_factor - scaling.low_freq_factor);
          f = (1 - smooth) * f / scaling.factor + smooth * f;
        }
        break;
      }
    }
    if (static_cast<size_t>(i) < freq_factors.size()) f /= freq_factors[static_cast<size_t>(i)];
    inv[static_cast<size_t>(i)] = static_cast<float>(f);
  }
  return inv;
}

void rope_rotate(float* x, int n_heads, int head_dim, const float* cos, const float* sin, RopeStyle style) {
  kernels::active().rope(x, n_heads, head_dim, cos, sin, style == RopeStyle::HalfSplit);
}

}  // namespace minnow
