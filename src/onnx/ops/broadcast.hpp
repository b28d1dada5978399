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
  int64_t total = 1;
  for (int64_t d : out_shape) total *= d;
  if (total == 0) return;
  const int full_rank = static_cast<int>(out_shape.size());
  std::array<std::vector<int64_t>, N> full;
  for (size_t i = 0; i < N; ++i) {
    const auto& s = *in_shapes[i];
    full[i].assign(full_rank, 0);
    int64_t acc = 1;
    for (int d = full_rank - 1, k = static_cast<int>(s.size()) - 1; k >= 0; --d, --k) {
      full[i][d] = s[k] == 1 ? 0 : acc;
      acc *= s[k];
    }
  }
  // Merge neighbouring dimensions that every input walks alike (contiguously, or not at
  // all), so the innermost run is as long as possible (a per-channel bias: H x W).
  std::vector<int64_t> shape;
  std::array<std::vector<int64_t>, N> strides;
  for (int d = 0; d < full_rank; ++d) {
    if (out_shape[d] == 1) continue;
    bool merge = !shape.empty();
    for (size_t i = 0; i < N && merge; ++i) {
      const int64_t outer = strides[i].back(), inner = full[i][d];
      merge = (outer == 0 && inner == 0) || (inner != 0 && outer == inner * out_shape[d]);
    }
    if (merge) {
      shape.back() *= out_shape[d];
      for (size_t i = 0; i < N; ++i) strides[i].back() = full[i][d];
    } else {
      shape.push_back(out_shape[d]);
      for (size_t i = 0; i < N; ++i) strides[i].push_back(full[i][d]);
    }
  }
  if (shape.empty()) {
    shape.push_back(1);
    for (size_t i = 0; i < N; ++i) strides[i].push_back(0);
  }
  const int rank = static_cast<int>(shape.size());
  const int64_t inner = shape[rank - 1];
  std::array<int64_t, N> step{}, off{};
  for (size_t i = 0; i < N; ++i) step[i] = strides[i][rank - 1];
  std::vector<int64_t> idx(rank > 0 ? rank - 1 : 0, 0);
  for (int64_t done = 0; done < total; done += inner) {
    run(off, step, inner);
    // Odometer over the outer dimensions.
    for (int d = rank - 2; d >= 0; --d) {
      if (++idx[d] < shape[d]) {
        for (size_t i = 0; i < N; ++i) off[i] += strides[i][d];
        break;
      }
      for (size_t i = 0; i < N; ++i) off[i] -= strides[i][d] * (shape[d] - 1);
      idx[d] = 0;
    }
  }
}

}  // namespace minnow::onnx
