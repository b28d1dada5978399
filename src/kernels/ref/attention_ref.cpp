// Scalar reference of attention's online-softmax tile step: the definition the AVX2
// version is tested against.
#include "kernels/ref/attention_ref.hpp"

#include <algorithm>
#include <cmath>

namespace minnow::kernels {

float attn_softmax_tile_ref(float* s, int64_t n, float scale, float cap, float* m, float* l) {
  float m_new = *m;
  for (int64_t i = 0; i < n; ++i) {
    float x = s[i] * scale;
    if (cap > 0) x = cap * std::tanh(x / cap);
    s[i] = x;
    m_new = std::max(m_new, x);
  }
  const float factor = std::exp(*m - m_new);  // 0 on the first tile (m = -inf), 1 when the max held
  float sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += (s[i] = std::exp(s[i] - m_new));
  *l = *l * factor + sum;
  *m = m_new;
  return factor;
}

}  // namespace minnow::kernels
