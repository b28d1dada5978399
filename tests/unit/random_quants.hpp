// Random GGUF-layout matrices for kernel tests: every quant bit pattern, with small finite
// f16 scales (and minimums) so that sums stay finite.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "tensor/dtype.hpp"
#include "tensor/fp16.hpp"

namespace minnow::test_util {

inline bool is_k_quant(DType t) { return t == DType::Q4_K || t == DType::Q5_K || t == DType::Q6_K; }

inline std::vector<uint8_t> random_matrix(DType t, int64_t rows, int64_t cols, std::mt19937& rng) {
  const DTypeTraits& tr = dtype_traits(t);
  const int64_t blocks = rows * cols / tr.block_size;
  std::vector<uint8_t> b(static_cast<size_t>(blocks * tr.block_bytes));
  for (auto& x : b) x = static_cast<uint8_t>(rng());
  std::uniform_real_distribution<float> sc(-0.05f, 0.05f);
  // Where the f16 scales sit: d (and a minimum) at the start, Q6_K's d at the end.
  const bool k = is_k_quant(t);
  const std::vector<int> halves = t == DType::Q6_K                                   ? std::vector<int>{208}
                                  : t == DType::Q4_1 || t == DType::Q5_1 || k ? std::vector<int>{0, 2}
                                                                                      : std::vector<int>{0};
  for (int64_t i = 0; i < blocks; ++i)
    for (int at : halves) {
      const uint16_t v = fp32_to_fp16(k ? std::fabs(sc(rng)) * 0.1f : sc(rng));
      std::memcpy(&b[static_cast<size_t>(i * tr.block_bytes + at)], &v, 2);
    }
  return b;
}

}  // namespace minnow::test_util
