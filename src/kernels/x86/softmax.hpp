// AVX2 softmax pieces (see softmax.cpp).
#pragma once
#include <cstdint>

namespace minnow::kernels {

float exp_sum_avx2(float* s, int64_t n, float shift);

}  // namespace minnow::kernels
