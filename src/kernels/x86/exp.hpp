// The vectorized exp shared by the AVX2 kernels (softmax, SiLU, GELU). Compiled into each
// including file for its own instruction set (internal linkage).
#pragma once
#include <immintrin.h>

namespace minnow::kernels {
namespace {

// e^x = 2^n e^r with n = round(x / ln 2), r = x - n ln 2 in [-ln2/2, ln2/2] (ln 2 split in
// two so that n * hi is exact), e^r by Taylor to degree 7 (truncation < 8e-9 relative).
// Max relative error vs std::exp over [-87, 88]: 1.2e-7, about 1 ulp (measured and tested).
// Inputs are clamped to that range: e^x saturates at ~1.65e38 above and ~1.2e-38 below,
// which the activations below turn into their limits (0 or x).
inline __m256 exp_ps(__m256 x) {
  x = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(-87.3f)), _mm256_set1_ps(88.0f));
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693145751953125f), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(1.42860682030941723e-6f), r);
  __m256 p = _mm256_set1_ps(1.0f / 5040);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 720));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 120));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  const __m256i two_n = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(p, _mm256_castsi256_ps(two_n));
}

}  // namespace
}  // namespace minnow::kernels
