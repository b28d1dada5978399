// Tiled causal attention with an online softmax (attention.hpp), and Transformer::attention,
// which splits a batch into blocks of one sequence's consecutive rows and runs them on the
// thread pool.
#include "models/attention.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "models/transformer.hpp"

namespace minnow {
namespace {

using kernels::kMaxAttnQueries;

// attend()'s scratch, carved from one buffer: the block's queries and output accumulators
// (contiguous, as the kernels take them), one tile of scores per query, running max and sum.
struct Scratch {
  float *q, *o, *s, *m, *l;
  Scratch(float* base, int hd) {
    const size_t qo = static_cast<size_t>(kAttnBlockQueries) * static_cast<size_t>(hd);
    q = base;
    o = q + qo;
    s = o + qo;
    m = s + static_cast<size_t>(kAttnBlockQueries) * kAttnTile;
    l = m + kAttnBlockQueries;
  }
};

// s[i * kAttnTile + p - from] = q_i . K_p for queries [i0, i1), positions [from, to).
void tile_scores(const kernels::KernelTable& kt, const AttnKv& kv, int hd, const float* q, int i0, int i1, int from,
                 int to, float* s) {
  const int n = to - from;
  const uint8_t* k = kv.k + from * kv.stride;
  for (int i = i0; i < i1; i += kMaxAttnQueries) {
    const int nq = std::min(kMaxAttnQueries, i1 - i);
    const float* qi = q + static_cast<size_t>(i) * hd;
    float* si = s + static_cast<size_t>(i) * kAttnTile;
    switch (kv.type) {
      case DType::F16:
        kt.attn_scores_f16(qi, nq, reinterpret_cast<const uint16_t*>(k), kv.stride / 2, n, hd, si, kAttnTile);
        break;
      case DType::Q8_0: kt.attn_scores_q8(qi, nq, k, kv.stride, n, hd, si, kAttnTile); break;
      default:
        for (int g = 0; g < nq; ++g)
          for (int p = 0; p < n; ++p)
            si[g * kAttnTile + p] = kt.dot_f32(qi + g * hd, reinterpret_cast<const float*>(k + p * kv.stride), hd);
    }
  }
}

// o_i += sum over p in [from, to) of w[i * kAttnTile + p] * V_p for queries [i0, i1), which
// all see exactly those positions.
void tile_values(const kernels::KernelTable& kt, const AttnKv& kv, int hd, const float* w, int i0, int i1, int from,
                 int to, float* o) {
  const int n = to - from;
  const uint8_t* v = kv.v + from * kv.stride;
  for (int i = i0; i < i1; i += kMaxAttnQueries) {
    const int nq = std::min(kMaxAttnQueries, i1 - i);
    const float* wi = w + static_cast<size_t>(i) * kAttnTile;
    float* oi = o + static_cast<size_t>(i) * hd;
    switch (kv.type) {
      case DType::F16:
        kt.attn_values_f16(wi, nq, kAttnTile, reinterpret_cast<const uint16_t*>(v), kv.stride / 2, n, hd, oi);
        break;
      case DType::Q8_0: kt.attn_values_q8(wi, nq, kAttnTile, v, kv.stride, n, hd, oi); break;
      default:
        for (int g = 0; g < nq; ++g)
          for (int p = 0; p < n; ++p) {
            const auto* vp = reinterpret_cast<const float*>(v + p * kv.stride);
            const float a = wi[g * kAttnTile + p];
            for (int c = 0; c < hd; ++c) oi[g * hd + c] += a * vp[c];
          }
    }
  }
}

}  // namespace

size_t attn_scratch_floats(int head_dim) {
  return static_cast<size_t>(kAttnBlockQueries) * (2 * static_cast<size_t>(head_dim) + kAttnTile + 2);
}

void attend(const kernels::KernelTable& kt, const AttnKv& kv, const AttnParams& p, const AttnQueries& qs,
            float* scratch) {
  const int hd = p.head_dim, heads = qs.heads, rows = qs.rows;
  const Scratch sc(scratch, hd);
  const size_t row_values = static_cast<size_t>(heads) * hd;  // a row's heads are contiguous
  for (int r = 0; r < rows; ++r)
    std::memcpy(sc.q + r * row_values, qs.q + r * qs.row_stride, row_values * sizeof(float));
  std::fill(sc.o, sc.o + rows * row_values, 0.0f);
  std::fill(sc.m, sc.m + rows * heads, -INFINITY);
  std::fill(sc.l, sc.l + rows * heads, 0.0f);

  // Row r sees positions [row_begin(r), row_end(r)), of this tile [tile_begin(r), tile_end(r)); all grow with r.
  auto row_end = [&](int r) { return qs.pos0 + r + 1; };
  auto row_begin = [&](int r) { return p.window > 0 ? std::max(0, row_end(r) - p.window) : 0; };
  for (int t0 = row_begin(0) / kAttnTile * kAttnTile; t0 < row_end(rows - 1); t0 += kAttnTile) {
    const int t1 = t0 + kAttnTile;
    int r0 = 0, r1 = rows;  // the rows that see some of this tile
    while (row_end(r0) <= t0) ++r0;
    while (row_begin(r1 - 1) >= t1) --r1;
    const int from = std::max(t0, row_begin(r0)), to = std::min(t1, row_end(r1 - 1));
    // Scores over the union of the rows' ranges: each is computed alike for any range.
    tile_scores(kt, kv, hd, sc.q, r0 * heads, r1 * heads, from, to, sc.s);
    auto tile_begin = [&](int r) { return std::max(t0, row_begin(r)); };
    auto tile_end = [&](int r) { return std::min(t1, row_end(r)); };  // one past
    for (int r = r0; r < r1; ++r)  // each query's weights over its own positions of the tile
      for (int i = r * heads, n = tile_end(r) - tile_begin(r); i < (r + 1) * heads; ++i) {
        float* w = sc.s + static_cast<size_t>(i) * kAttnTile + (tile_begin(r) - from);
        const float factor = kt.attn_softmax_tile(w, n, p.scale, p.softcap, &sc.m[i], &sc.l[i]);
        if (factor != 1.0f)
          for (float *o = sc.o + static_cast<size_t>(i) * hd, *e = o + hd; o < e; ++o) *o *= factor;
      }
    for (int r = r0; r < r1;) {
      const int a = tile_begin(r), b = tile_end(r);
      int run = r + 1;  // rows that see the same positions share the value kernel calls
      while (run < r1 && tile_begin(run) == a && tile_end(run) == b) ++run;
      tile_values(kt, kv, hd, sc.s + (a - from), r * heads, run * heads, a, b, sc.o);
      r = run;
    }
  }
  for (int r = 0; r < rows; ++r)
    for (int h = 0; h < heads; ++h) {
      const int i = r * heads + h;
      const float inv = 1.0f / sc.l[i];
      const float* o = sc.o + static_cast<size_t>(i) * hd;
      float* out = qs.out + r * qs.row_stride + static_cast<size_t>(h) * hd;
      for (int c = 0; c < hd; ++c) out[c] = o[c] * inv;
    }
}

// Causal grouped-query attention of each row over its sequence's cache (positions 0..pos,
// or the last sliding_window of them on sliding-window layers). A task is a block of one
// sequence's consecutive rows with the query heads of one KV head (all of them, or one when
// there are too few tasks for the threads); blocks late in a sequence cost the most, so they
// are claimed first.
void Transformer::attention(int layer, const Batch& b) {
  const int hd = c_.head_dim, n_heads = c_.n_heads, n_kv = c_.n_kv_heads, group = n_heads / n_kv;
  const AttnParams params{.head_dim = hd,
                          .scale = c_.attn_scale > 0 ? c_.attn_scale : 1.0f / std::sqrt(static_cast<float>(hd)),
                          .softcap = c_.attn_softcap,
                          .window = c_.is_sliding(layer) ? c_.sliding_window : 0};
  const auto& kt = kernels::active();
  int heads_per_task = std::min(group, kAttnBlockQueries);
  const int rows_per_block = std::max(1, kAttnBlockQueries / heads_per_task);
  int n_blocks = 0;  // block i: rows [attn_blocks_[i], attn_blocks_[i + 1])
  for (int t = 0; t < b.n; ++t)
    if (t == 0 || b.kv[t] != b.kv[t - 1] || b.pos[t] != b.pos[t - 1] + 1 ||
        t - attn_blocks_[static_cast<size_t>(n_blocks - 1)] == rows_per_block)
      attn_blocks_[static_cast<size_t>(n_blocks++)] = t;
  attn_blocks_[static_cast<size_t>(n_blocks)] = b.n;
  if (int64_t{n_blocks} * n_kv < 4 * pool_.size()) heads_per_task = 1;
  const int chunks = (group + heads_per_task - 1) / heads_per_task, tasks_per_block = n_kv * chunks;
  const size_t scratch_floats = attn_scratch_floats(hd);
  const auto row_stride = static_cast<int64_t>(n_heads) * hd;
  pool_.parallel_for(int64_t{n_blocks} * tasks_per_block, [&](int64_t task, int thread) {
    const auto blk = static_cast<size_t>(n_blocks - 1 - task / tasks_per_block);
    const int within = static_cast<int>(task % tasks_per_block), kvh = within / chunks;
    const int h0 = kvh * group + within % chunks * heads_per_task;
    const int heads = std::min(heads_per_task, (kvh + 1) * group - h0);
    const int r0 = attn_blocks_[blk], rows = attn_blocks_[blk + 1] - r0;
    const KvCache& cache = *b.kv[r0];
    const AttnKv kv{.type = cache.type(),
                    .k = static_cast<const uint8_t*>(cache.k(layer, 0)) + cache.head_offset(kvh),
                    .v = static_cast<const uint8_t*>(cache.v(layer, 0)) + cache.head_offset(kvh),
                    .stride = static_cast<int64_t>(cache.row_bytes())};
    const size_t at = static_cast<size_t>(r0) * row_stride + static_cast<size_t>(h0) * hd;
    const AttnQueries qs{.q = &q_[at], .out = &attn_[at], .row_stride = row_stride, .rows = rows, .heads = heads,
                         .pos0 = b.pos[r0]};
    attend(kt, kv, params, qs, &attn_scratch_[static_cast<size_t>(thread) * scratch_floats]);
  });
}

}  // namespace minnow
