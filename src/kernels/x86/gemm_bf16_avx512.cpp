// bf16 GEMM on AVX512-BF16: vdpbf16ps adds two bf16 products per f32 lane, one lane per
// weight row (kernels/bf16_gemm.hpp's layout), the token's column pair broadcast to all
// lanes. Tiles of 2 panels (32 rows) x up to 12 tokens: 24 accumulators, 2 weight loads
// and 12 broadcasts per 24 instructions.
#include <immintrin.h>

#include <cstring>

#include "kernels/bf16_gemm.hpp"

namespace minnow::kernels {
namespace {

constexpr int kMaxTileTokens = 12;

template <int NP, int NT>
void tile(const uint16_t* panels, int64_t k, const uint16_t* x, int64_t x_stride, float* y, int64_t ldy, int64_t rows,
          const float* bias) {
  __m512 acc[NP][NT];
  for (int p = 0; p < NP; ++p)
    for (int t = 0; t < NT; ++t) acc[p][t] = _mm512_setzero_ps();
  const int64_t pairs = k / 2, panel_stride = kBf16PanelRows * k;
  for (int64_t j = 0; j < pairs; ++j) {
    __m512bh w[NP];
    for (int p = 0; p < NP; ++p) w[p] = (__m512bh)_mm512_loadu_si512(panels + p * panel_stride + j * 32);
    for (int t = 0; t < NT; ++t) {
      int32_t pair;
      std::memcpy(&pair, x + t * x_stride + 2 * j, 4);
      const __m512bh b = (__m512bh)_mm512_set1_epi32(pair);
      for (int p = 0; p < NP; ++p) acc[p][t] = _mm512_dpbf16_ps(acc[p][t], w[p], b);
    }
  }
  for (int p = 0; p < NP; ++p) {
    const int64_t valid = rows - p * kBf16PanelRows;
    if (valid <= 0) break;
    const __mmask16 m = valid >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << valid) - 1);
    const __m512 b = bias ? _mm512_maskz_loadu_ps(m, bias + p * kBf16PanelRows) : _mm512_setzero_ps();
    for (int t = 0; t < NT; ++t) _mm512_mask_storeu_ps(y + t * ldy + p * kBf16PanelRows, m, _mm512_add_ps(acc[p][t], b));
  }
}

template <int NP, int... NT>
void tail(int nt, const uint16_t* panels, int64_t k, const uint16_t* x, int64_t x_stride, float* y, int64_t ldy,
          int64_t rows, const float* bias, std::integer_sequence<int, NT...>) {
  ((nt == NT + 1 ? tile<NP, NT + 1>(panels, k, x, x_stride, y, ldy, rows, bias) : void()), ...);
}

template <int NP>
void panels_times_tokens(const uint16_t* panels, int64_t k, const uint16_t* x, int64_t x_stride, int64_t n_tokens,
                         float* y, int64_t ldy, int64_t rows, const float* bias) {
  int64_t t = 0;
  for (; t + kMaxTileTokens <= n_tokens; t += kMaxTileTokens)
    tile<NP, kMaxTileTokens>(panels, k, x + t * x_stride, x_stride, y + t * ldy, ldy, rows, bias);
  if (t < n_tokens)
    tail<NP>(static_cast<int>(n_tokens - t), panels, k, x + t * x_stride, x_stride, y + t * ldy, ldy, rows, bias,
             std::make_integer_sequence<int, kMaxTileTokens - 1>());
}

}  // namespace

void gemm_bf16_avx512(const uint16_t* panels, int n_panels, int64_t k, const uint16_t* x, int64_t x_stride,
                      int64_t n_tokens, float* y, int64_t ldy, int64_t rows, const float* bias) {
  if (n_panels == 2) panels_times_tokens<2>(panels, k, x, x_stride, n_tokens, y, ldy, rows, bias);
  else panels_times_tokens<1>(panels, k, x, x_stride, n_tokens, y, ldy, rows, bias);
}

}  // namespace minnow::kernels
