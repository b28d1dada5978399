// RoPE frequencies and rotation. Frequencies follow the model's scaling rule; the
// rotation pairs dimensions as the weights were laid out (see RopeStyle).
#pragma once
#include <vector>

#include "models/config.hpp"

namespace minnow {

// Inverse frequencies (head_dim / 2 of them) for `base` with `scaling` applied, each then
// divided by freq_factors[i] when given (GGUF rope_freqs).
std::vector<float> rope_inv_freq(int head_dim, float base, const RopeScaling& scaling,
                                 const std::vector<float>& freq_factors = {});

// Rotates n_heads vectors of head_dim values at x by the angles whose cos/sin are given
// (head_dim / 2 each), with the kernel table's rope (kernels/ops.hpp).
void rope_rotate(float* x, int n_heads, int head_dim, const float* cos, const float* sin, RopeStyle style);

}  // namespace minnow
