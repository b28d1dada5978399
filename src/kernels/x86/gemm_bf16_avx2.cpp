// bf16 GEMM on AVX2 (no bf16 instructions): each 64-byte column-pair line of a panel is
// widened to f32 (the even columns by a shift, the odd ones by a mask) and multiplied with
// the token's two values by FMA, odd then even as vdpbf16ps orders them. Tiles of 1 panel
// (16 rows, two registers) x up to 4 tokens.
#include <immintrin.h>

#include "kernels/bf16_gemm.hpp"
#include "kernels/bf16_panels.hpp"

namespace minnow::kernels {
namespace {

constexpr int kMaxTileTokens = 4;

template <int NT>
struct Tile {
  static void run(const uint16_t* panel, int64_t k, const uint16_t* x, int64_t x_stride, float* y, int64_t ldy,
                  int64_t rows, const float* bias);
};

template <int NT>
void Tile<NT>::run(const uint16_t* panel, int64_t k, const uint16_t* x, int64_t x_stride, float* y, int64_t ldy,
                   int64_t rows, const float* bias) {
  __m256 acc[2][NT];
  for (int h = 0; h < 2; ++h)
    for (int t = 0; t < NT; ++t) acc[h][t] = _mm256_setzero_ps();
  const __m256i odd_mask = _mm256_set1_epi32(static_cast<int>(0xFFFF0000u));
  for (int64_t j = 0; j < k / 2; ++j) {
    __m256 even[2], odd[2];
    for (int h = 0; h < 2; ++h) {
      const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(panel + j * 32 + h * 16));
      even[h] = _mm256_castsi256_ps(_mm256_slli_epi32(v, 16));
      odd[h] = _mm256_castsi256_ps(_mm256_and_si256(v, odd_mask));
    }
    for (int t = 0; t < NT; ++t) {
      const __m256 xo = _mm256_set1_ps(from_bf16(x[t * x_stride + 2 * j + 1]));
      const __m256 xe = _mm256_set1_ps(from_bf16(x[t * x_stride + 2 * j]));
      for (int h = 0; h < 2; ++h) acc[h][t] = _mm256_fmadd_ps(even[h], xe, _mm256_fmadd_ps(odd[h], xo, acc[h][t]));
    }
  }
  for (int t = 0; t < NT; ++t) {
    alignas(32) float out[16];
    _mm256_store_ps(out, acc[0][t]);
    _mm256_store_ps(out + 8, acc[1][t]);
    const int64_t n = rows < 16 ? rows : 16;
    for (int64_t r = 0; r < n; ++r) y[t * ldy + r] = bias ? out[r] + bias[r] : out[r];
  }
}

}  // namespace

// to_bf16 on 8 values at a time, the same integer steps.
void round_bf16_avx2(const float* x, uint16_t* out, int64_t n) {
  const __m256i exp_mask = _mm256_set1_epi32(0x7F800000), mant_mask = _mm256_set1_epi32(0x007FFFFF);
  const __m256i sign = _mm256_set1_epi32(static_cast<int>(0x80000000u)), one = _mm256_set1_epi32(1);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i));
    const __m256i e = _mm256_and_si256(b, exp_mask);
    const __m256i tiny = _mm256_cmpeq_epi32(e, _mm256_setzero_si256());  // zero or denormal: signed zero
    const __m256i nan = _mm256_andnot_si256(_mm256_cmpeq_epi32(_mm256_and_si256(b, mant_mask), _mm256_setzero_si256()),
                                            _mm256_cmpeq_epi32(e, exp_mask));
    __m256i r = _mm256_add_epi32(b, _mm256_add_epi32(_mm256_set1_epi32(0x7FFF),
                                                     _mm256_and_si256(_mm256_srli_epi32(b, 16), one)));
    r = _mm256_blendv_epi8(r, _mm256_and_si256(b, sign), tiny);
    r = _mm256_blendv_epi8(r, _mm256_or_si256(b, _mm256_set1_epi32(0x400000)), nan);  // quiet NaN stays NaN
    r = _mm256_srli_epi32(r, 16);
    // Pack 8 x 32-bit (values < 65536) into 8 x 16-bit, in order.
    const __m128i lo = _mm256_castsi256_si128(r), hi = _mm256_extracti128_si256(r, 1);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), _mm_packus_epi32(lo, hi));
  }
  for (; i < n; ++i) out[i] = to_bf16(x[i]);
}

void gemm_bf16_avx2(const uint16_t* panels, int n_panels, int64_t k, const uint16_t* x, int64_t x_stride,
                    int64_t n_tokens, float* y, int64_t ldy, int64_t rows, const float* bias) {
  bf16_panels_by_tiles<kMaxTileTokens, Tile>(panels, n_panels, k, x, x_stride, n_tokens, y, ldy, rows, bias);
}

}  // namespace minnow::kernels
