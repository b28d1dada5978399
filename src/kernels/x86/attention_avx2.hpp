// AVX2 version of attention's online-softmax tile step (KernelTable::attn_softmax_tile).
#pragma once
#include <cstdint>

namespace minnow::kernels {

float attn_softmax_tile_avx2(float* s, int64_t n, float scale, float cap, float* m, float* l);

}  // namespace minnow::kernels
