// What the SIMD sgemm kernels (kernels/ops.hpp) share around their own register tiles:
// the dense form's row pointers, and the loop nest of sgemm_rows: k in blocks of 128 (a
// strip of B, 128 x kCols floats, packed, stays in L1 while every row block passes over it; a
// later block resumes the sums stored in C, so each output stays one fused multiply-add
// chain in k order, and only the last applies the epilogue), column strips of kCols, row
// blocks of kRows, then the leftover rows as one block of their own count.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>
#include <vector>

namespace minnow::kernels {

// One pass of a tile over k values: where it starts and whether it ends the sums.
struct KBlock {
  int64_t k;
  bool resume, finish;
};

// tile(std::integral_constant<int, R>, a, b, j, w, c, kb, row0) computes rows row0 ..
// row0 + R of columns [j, j + w) (w <= kCols) into c (row row0 at c), reading A from a
// (row row0 at a, k0 applied) and B's rows from b (k0 applied).
// Where several row blocks pass over a strip, the k block's rows are first copied whole into
// one contiguous panel (rows a little longer than n, so that they spread over L1's sets): B's
// rows may lie anywhere (a convolution's taps, planes apart), and strips of scattered rows
// were fetched from L2 again by each row block. Rows that start a few floats after the
// previous one share its copy. The tiles read the panel: the same sums.
template <int kRows, int kCols, class Tile>
void sgemm_blocked(const float* a, int64_t lda, const float* const* b, float* c, int64_t ldc, int64_t m, int64_t n,
                   int64_t k, Tile&& tile) {
  constexpr int64_t kKc = 128;
  thread_local std::vector<float> panel;
  thread_local std::vector<const float*> panel_rows;
  const bool pack = m >= 2 * kRows && n <= 1024;
  const int64_t ld = (n + 15) / 16 * 16 + 16;
  if (pack) {
    panel.resize(static_cast<size_t>(kKc * ld));
    panel_rows.resize(kKc);
  }
  for (int64_t k0 = 0; k0 < k || k0 == 0; k0 += kKc) {
    const KBlock kb{std::min(kKc, k - k0), k0 > 0, k0 + kKc >= k};
    const float* const* bk = b + k0;
    if (pack) {
      // A row that starts 1-8 floats after the one before it (a convolution's next tap in a
      // row: kw + 1) is read from that row's copy, which is made as much longer.
      const auto at = [&](int64_t i) { return reinterpret_cast<uintptr_t>(b[k0 + i]); };
      for (int64_t p = 0; p < kb.k;) {
        int64_t last = p;
        // (Each step at most n floats, so the copied span is the rows' own values, no gap.)
        while (last + 1 < kb.k && at(last + 1) > at(last) && at(last + 1) - at(last) <= n * sizeof(float) &&
               at(last + 1) - at(p) <= 8 * sizeof(float))
          ++last;
        const int64_t extra = static_cast<int64_t>((at(last) - at(p)) / sizeof(float));
        float* row = panel.data() + p * ld;
        std::memcpy(row, b[k0 + p], static_cast<size_t>(n + extra) * sizeof(float));
        for (int64_t i = p; i <= last; ++i)
          panel_rows[static_cast<size_t>(i)] = row + static_cast<int64_t>((at(i) - at(p)) / sizeof(float));
        p = last + 1;
      }
      bk = panel_rows.data();
    }
    for (int64_t j = 0; j < n; j += kCols) {
      const int64_t w = std::min<int64_t>(kCols, n - j);
      int64_t i = 0;
      for (; i + kRows <= m; i += kRows)
        tile(std::integral_constant<int, kRows>{}, a + i * lda + k0, bk, j, w, c + i * ldc, kb, i);
      // The leftover rows, 1 .. kRows - 1, as one tile of that height.
      [&]<int... R>(std::integer_sequence<int, R...>) {
        ((m - i == R + 1 ? tile(std::integral_constant<int, R + 1>{}, a + i * lda + k0, bk, j, w, c + i * ldc, kb, i)
                         : void()),
         ...);
      }(std::make_integer_sequence<int, kRows - 1>{});
    }
  }
}

// B's k rows as pointers (sgemm_blocked packs them into panels where rows reuse them).
inline const float* const* dense_rows(const float* b, int64_t ldb, int64_t k) {
  thread_local std::vector<const float*> rows;
  rows.resize(static_cast<size_t>(std::max<int64_t>(k, 1)));
  for (int64_t p = 0; p < k; ++p) rows[p] = b + p * ldb;
  return rows.data();
}

}  // namespace minnow::kernels
