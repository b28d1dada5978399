// The loop the widening bf16 kernels (AVX2, NEON) share: each panel of 16 rows in turn,
// its tokens in tiles of up to MaxTokens; Tile<NT>::run(panel, k, x, x_stride, y, ldy,
// rows, bias) computes one tile of NT tokens (compile-time, so its accumulators stay in
// registers). Internal to the kernel files.
#pragma once
#include <cstdint>
#include <utility>

#include "kernels/bf16_gemm.hpp"

namespace minnow::kernels {

template <template <int> class Tile, int... NT>
void bf16_tail_tile(int nt, const uint16_t* panel, int64_t k, const uint16_t* x, int64_t x_stride, float* y, int64_t ldy,
                    int64_t rows, const float* bias, std::integer_sequence<int, NT...>) {
  ((nt == NT + 1 ? Tile<NT + 1>::run(panel, k, x, x_stride, y, ldy, rows, bias) : void()), ...);
}

template <int MaxTokens, template <int> class Tile>
void bf16_panels_by_tiles(const uint16_t* panels, int n_panels, int64_t k, const uint16_t* x, int64_t x_stride,
                          int64_t n_tokens, float* y, int64_t ldy, int64_t rows, const float* bias) {
  for (int p = 0; p < n_panels && rows > p * kBf16PanelRows; ++p) {
    const uint16_t* panel = panels + p * kBf16PanelRows * k;
    float* yp = y + p * kBf16PanelRows;
    const int64_t prow = rows - p * kBf16PanelRows;
    const float* bp = bias ? bias + p * kBf16PanelRows : nullptr;
    int64_t t = 0;
    for (; t + MaxTokens <= n_tokens; t += MaxTokens)
      Tile<MaxTokens>::run(panel, k, x + t * x_stride, x_stride, yp + t * ldy, ldy, prow, bp);
    if (t < n_tokens)
      bf16_tail_tile<Tile>(static_cast<int>(n_tokens - t), panel, k, x + t * x_stride, x_stride, yp + t * ldy, ldy, prow,
                           bp, std::make_integer_sequence<int, MaxTokens - 1>());
  }
}

}  // namespace minnow::kernels
