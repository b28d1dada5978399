// Softmax's numerators: s[i] = exp(s[i] - shift), and their sum.
#include <immintrin.h>

#include <cmath>

#include "kernels/x86/exp.hpp"
#include "kernels/x86/softmax.hpp"

namespace minnow::kernels {

float exp_sum_avx2(float* s, int64_t n, float shift) {
  const __m256 sh = _mm256_set1_ps(shift);
  __m256 acc = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 e = exp_ps(_mm256_sub_ps(_mm256_loadu_ps(s + i), sh));
    _mm256_storeu_ps(s + i, e);
    acc = _mm256_add_ps(acc, e);
  }
  __m128 h = _mm_add_ps(_mm256_castps256_ps128(acc), _mm256_extractf128_ps(acc, 1));
  h = _mm_add_ps(h, _mm_movehl_ps(h, h));
  h = _mm_add_ss(h, _mm_movehdup_ps(h));
  float sum = _mm_cvtss_f32(h);
  for (; i < n; ++i) sum += (s[i] = std::exp(s[i] - shift));
  return sum;
}

}  // namespace minnow::kernels
