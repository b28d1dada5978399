// AVX2 online-softmax tile step: scale and max eight scores at a time, then the vectorized
// exp and sum of softmax.cpp. Soft-capping (Gemma 2 only) keeps the scalar tanh.
#include "kernels/x86/attention_avx2.hpp"

#include <immintrin.h>

#include <algorithm>
#include <cmath>

#include "kernels/x86/softmax.hpp"

namespace minnow::kernels {
namespace {

inline float hmax(__m256 v) {
  __m128 x = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  x = _mm_max_ps(x, _mm_movehl_ps(x, x));
  x = _mm_max_ss(x, _mm_movehdup_ps(x));
  return _mm_cvtss_f32(x);
}

// s[i] *= scale in place; returns max(m, max of them).
float scale_and_max(float* s, int64_t n, float scale, float m) {
  const __m256 vs = _mm256_set1_ps(scale);
  __m256 vmax = _mm256_set1_ps(m);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 x = _mm256_mul_ps(_mm256_loadu_ps(s + i), vs);
    _mm256_storeu_ps(s + i, x);
    vmax = _mm256_max_ps(vmax, x);
  }
  float mx = hmax(vmax);
  for (; i < n; ++i) mx = std::max(mx, s[i] *= scale);
  return mx;
}

}  // namespace

float attn_softmax_tile_avx2(float* s, int64_t n, float scale, float cap, float* m, float* l) {
  float m_new;
  if (cap > 0) {
    m_new = *m;
    for (int64_t i = 0; i < n; ++i) m_new = std::max(m_new, s[i] = cap * std::tanh(s[i] * scale / cap));
  } else {
    m_new = scale_and_max(s, n, scale, *m);
  }
  const float factor = std::exp(*m - m_new);  // 0 on the first tile (m = -inf), 1 when the max held
  *l = *l * factor + exp_sum_avx2(s, n, m_new);
  *m = m_new;
  return factor;
}

}  // namespace minnow::kernels
