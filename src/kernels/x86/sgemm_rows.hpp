// The row pointers through which the dense sgemm runs sgemm_rows (both x86 kernels).
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

namespace minnow::kernels {

// B's k rows as pointers. A strided B (a block of a convolution's channels x pixels: rows
// thousands of bytes apart) is first copied into contiguous rows when enough rows of A
// will reuse it: strided rows fall into few L1 sets and evict each other (rec's 240 x 240
// pointwise convolutions ran at half speed).
inline const float* const* dense_rows(const float* b, int64_t ldb, int64_t n, int64_t k, int64_t m) {
  thread_local std::vector<const float*> rows;
  thread_local std::vector<float> copy;
  rows.resize(static_cast<size_t>(std::max<int64_t>(k, 1)));
  if (m >= 16 && ldb > n && n > 0) {
    copy.resize(static_cast<size_t>(k * n));
    for (int64_t p = 0; p < k; ++p) std::copy_n(b + p * ldb, n, copy.data() + p * n);
    b = copy.data();
    ldb = n;
  }
  for (int64_t p = 0; p < k; ++p) rows[p] = b + p * ldb;
  return rows.data();
}

}  // namespace minnow::kernels
