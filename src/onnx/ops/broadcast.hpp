// Numpy-style broadcasting for the element-wise operators: the output shape, and a loop
// that walks N inputs over it with the innermost dimension as a run.
#pragma once
#include <array>
#include <cstdint>
#include <vector>

#include "onnx/graph.hpp"

namespace minnow::onnx {

std::vector<int64_t> broadcast_shapes(const Node& n, const std::vector<std::vector<int64_t>>& shapes);

// Calls run(offsets, inner_strides, count) for every run of the output's last dimension:
// offsets[i] is input i's element offset at the run's start, inner_strides[i] its step
// along the run (0 where that input broadcasts).
template <size_t N, class Run>
void broadcast_walk(const std::vector<int64_t>& out_shape, const std::array<const std::vector<int64_t>*, N>& in_shapes,
                    Run&& run) {
  const int rank = static_cast<int>(out_shape.size());
  int64_t total = 1;
  for (int64_t d : out_shape) total *= d;
  if (total == 0) return;
  std::array<std::vector<int64_t>, N> strides;
  for (size_t i = 0; i < N; ++i) {
    const auto& s = *in_shapes[i];
    strides[i].assign(rank, 0);
    int64_t acc = 1;
    for (int d = rank - 1, k = static_cast<int>(s.size()) - 1; k >= 0; --d, --k) {
      strides[i][d] = s[k] == 1 ? 0 : acc;
      acc *= s[k];
    }
  }
  const int64_t inner = rank ? out_shape[rank - 1] : 1;
  std::array<int64_t, N> step{}, off{};
  for (size_t i = 0; i < N; ++i) step[i] = rank ? strides[i][rank - 1] : 0;
  std::vector<int64_t> idx(rank > 0 ? rank - 1 : 0, 0);
  for (int64_t done = 0; done < total; done += inner) {
    run(off, step, inner);
    // Odometer over the outer dimensions.
    for (int d = rank - 2; d >= 0; --d) {
      if (++idx[d] < out_shape[d]) {
        for (size_t i = 0; i < N; ++i) off[i] += strides[i][d];
        break;
      }
      for (size_t i = 0; i < N; ++i) off[i] -= strides[i][d] * (out_shape[d] - 1);
      idx[d] = 0;
    }
  }
}

}  // namespace minnow::onnx
