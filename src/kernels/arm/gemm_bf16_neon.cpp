// bf16 GEMM on NEON (armv8.0-a: no bf16 instructions needed): each 64-byte column-pair line
// of a panel is four registers of 4 rows x 2 values, widened to f32 (the even columns by a
// shift, the odd ones by a mask) and multiplied with the token's two values by FMA, odd
// then even as the reference orders them; products of two bf16 values are exact in f32, so
// the results equal the scalar reference bit for bit. Tiles of 1 panel (16 rows) x up to
// 3 tokens: 12 accumulators, 8 widened weight registers.
#include <arm_neon.h>

#include "kernels/bf16_gemm.hpp"
#include "kernels/bf16_panels.hpp"

namespace minnow::kernels {
namespace {

constexpr int kMaxTileTokens = 3;

template <int NT>
struct Tile {
  static void run(const uint16_t* panel, int64_t k, const uint16_t* x, int64_t x_stride, float* y, int64_t ldy,
                  int64_t rows, const float* bias);
};

template <int NT>
void Tile<NT>::run(const uint16_t* panel, int64_t k, const uint16_t* x, int64_t x_stride, float* y, int64_t ldy,
                   int64_t rows, const float* bias) {
  float32x4_t acc[4][NT];
  for (int q = 0; q < 4; ++q)
    for (int t = 0; t < NT; ++t) acc[q][t] = vdupq_n_f32(0.0f);
  const uint32x4_t odd_mask = vdupq_n_u32(0xFFFF0000u);
  for (int64_t j = 0; j < k / 2; ++j) {
    float32x4_t even[4], odd[4];
    for (int q = 0; q < 4; ++q) {
      const uint32x4_t v = vreinterpretq_u32_u16(vld1q_u16(panel + j * 32 + q * 8));
      even[q] = vreinterpretq_f32_u32(vshlq_n_u32(v, 16));
      odd[q] = vreinterpretq_f32_u32(vandq_u32(v, odd_mask));
    }
    for (int t = 0; t < NT; ++t) {
      const float32x4_t xo = vdupq_n_f32(from_bf16(x[t * x_stride + 2 * j + 1]));
      const float32x4_t xe = vdupq_n_f32(from_bf16(x[t * x_stride + 2 * j]));
      for (int q = 0; q < 4; ++q) acc[q][t] = vfmaq_f32(vfmaq_f32(acc[q][t], odd[q], xo), even[q], xe);
    }
  }
  const int64_t n = rows < 16 ? rows : 16;
  for (int t = 0; t < NT; ++t) {
    float out[16];
    for (int q = 0; q < 4; ++q) vst1q_f32(out + q * 4, acc[q][t]);
    for (int64_t r = 0; r < n; ++r) y[t * ldy + r] = bias ? out[r] + bias[r] : out[r];
  }
}

}  // namespace

void gemm_bf16_neon(const uint16_t* panels, int n_panels, int64_t k, const uint16_t* x, int64_t x_stride,
                    int64_t n_tokens, float* y, int64_t ldy, int64_t rows, const float* bias) {
  bf16_panels_by_tiles<kMaxTileTokens, Tile>(panels, n_panels, k, x, x_stride, n_tokens, y, ldy, rows, bias);
}

}  // namespace minnow::kernels
