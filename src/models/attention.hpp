// Causal attention of a block of queries over one KV head of a cache, flash-attention
// style: keys and values in tiles of kAttnTile positions, each tile's scores turned into
// weights by an online softmax (running max and sum, the output rescaled when the max
// grows), so scratch is tile-sized and each K/V tile is read once for every query of the
// block while it is in cache.
//
// Tiles start at multiples of kAttnTile in absolute position, and every kernel computes
// each (query, position) alike whatever else it is given, so a query's numbers depend only
// on the query, its position and the cache: never on the other queries of its block, nor
// on how a batch was split into blocks (incremental decode == full prefill, batched ==
// alone, bit for bit).
#pragma once
#include <cstddef>
#include <cstdint>

#include "kernels/ops.hpp"
#include "tensor/dtype.hpp"

namespace minnow {

constexpr int kAttnTile = 128;  // key positions per tile
constexpr int kAttnBlockQueries = 32;  // most queries (rows x heads) one attend() call takes

// One KV head of a cache: position p's head_dim keys (values) start at k (v) + p * stride
// bytes, stored as type (F32, F16 or Q8_0).
struct AttnKv {
  DType type;
  const uint8_t* k;
  const uint8_t* v;
  int64_t stride;
};

struct AttnParams {
  int head_dim;
  float scale;  // applied to q . k
  float softcap;  // > 0: then x = softcap * tanh(x / softcap)
  int window;  // > 0: a query at position p sees only positions p - window + 1 .. p
};

// rows x heads queries (rows * heads <= kAttnBlockQueries): row r is at position pos0 + r
// and its head h's head_dim values are at q + r * row_stride + h * head_dim; the results
// go to the same places in out.
struct AttnQueries {
  const float* q;
  float* out;
  int64_t row_stride;
  int rows, heads, pos0;
};

// Floats of scratch that attend() needs for head_dim.
size_t attn_scratch_floats(int head_dim);

// out = softmax(scale * q . K) V over the positions each query sees (up to its own).
void attend(const kernels::KernelTable& kt, const AttnKv& kv, const AttnParams& p, const AttnQueries& qs,
            float* scratch);

}  // namespace minnow
