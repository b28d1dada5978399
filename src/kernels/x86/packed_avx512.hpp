// The 16-row packed kernels (two consecutive groups of 8) of packed_avx512.cpp, by type:
// nullptr for a type without them. The KernelTable's packed16 / packed16_15.
#pragma once
#include "kernels/ops.hpp"

namespace minnow::kernels {

PackedDotFn packed16_avx512(DType t);
PackedDot15Fn packed16_15_avx512(DType t);

}  // namespace minnow::kernels
