#version 450
// Attention of 16 consecutive tokens' queries of one head over the f16 cache, for prompts:
// each tile of 16 positions' keys and then values is staged in shared memory once for all 16
// queries (attention.comp stages it for one). Online softmax per query; each query sees
// positions first_seen..pos[t] (the window, causality), so one block's queries mask
// different parts of a tile. Rows of the tile past the block's last position are zero (the
// cache there may hold anything).
layout(local_size_x = 64) in;
layout(binding = 0, std430) readonly buffer Q { float q[]; };
layout(binding = 1, std430) readonly buffer KCache { uint kc[]; };
layout(binding = 2, std430) readonly buffer VCache { uint vc[]; };
layout(binding = 3, std430) readonly buffer Pos { uint pos[]; };
layout(binding = 4, std430) writeonly buffer Out { float o[]; };
layout(push_constant) uniform Push {
  uint n_heads, n_kv_heads, hd;
  uint layer_words, row_words;
  float scale, softcap;
  uint window;  // positions a query sees, itself included; 0: all
  uint n_tokens;
} p;

const uint kMaxHeadDim = 256u, kQueries = 16u, kTile = 16u;
// Rows padded by one element: the threads of a query group read different banks.
shared float qs[kQueries * (kMaxHeadDim + 1u)];
shared uint tile_words[kTile * (kMaxHeadDim / 2u + 1u)];  // keys, then values: f16 pairs
shared float sc[kQueries * (kTile + 1u)];                  // scores, then their exponentials
shared float factor[kQueries], sums[kQueries];

uint first_seen(uint at) { return (p.window > 0u && at + 1u > p.window) ? at + 1u - p.window : 0u; }

void main() {
  const uint h = gl_WorkGroupID.x, t0 = gl_WorkGroupID.y * kQueries, lid = gl_LocalInvocationID.x;
  const uint kvh = h / (p.n_heads / p.n_kv_heads);
  const uint hd = p.hd, half_hd = hd / 2u, qstride = hd + 1u, kstride = half_hd + 1u;
  const uint n_q = min(kQueries, p.n_tokens - t0);
  // The positions any of the block's queries sees.
  uint lo = 0xffffffffu, hi = 0u;
  for (uint i = 0u; i < n_q; ++i) lo = min(lo, first_seen(pos[t0 + i])), hi = max(hi, pos[t0 + i]);
  for (uint i = lid; i < kQueries * hd; i += 64u) {
    const uint qi = i / hd, d = i - qi * hd;
    qs[qi * qstride + d] = qi < n_q ? q[((t0 + qi) * p.n_heads + h) * hd + d] : 0.0;
  }
  // This thread: query qi; keys jj, jj + 4, .. of a tile; value words jj, jj + 4, ..
  const uint qi = lid / 4u, jj = lid % 4u;
  const uint my_pos = qi < n_q ? pos[t0 + qi] : 0u, my_first = first_seen(my_pos);
  float m = -1.0 / 0.0, l = 0.0;  // used by threads lid < kQueries, for query lid
  vec2 acc[kMaxHeadDim / 8u];
  for (uint c = 0u; c < kMaxHeadDim / 8u; ++c) acc[c] = vec2(0.0);
  const uint head_words = p.layer_words + kvh * half_hd;
  for (uint tile = lo / kTile * kTile; tile <= hi; tile += kTile) {
    const uint n = min(kTile, hi + 1u - tile);
    for (uint i = lid; i < kTile * half_hd; i += 64u) {
      const uint j = i / half_hd, w = i - j * half_hd;
      tile_words[j * kstride + w] = j < n ? kc[head_words + (tile + j) * p.row_words + w] : 0u;
    }
    barrier();
    for (uint k = 0u; k < kTile / 4u; ++k) {
      const uint j = jj + 4u * k, at = tile + j;
      float s = -1.0 / 0.0;
      if (qi < n_q && j < n && at <= my_pos && at >= my_first) {
        float dot = 0.0;
        for (uint w = 0u; w < half_hd; ++w) {
          const vec2 k2 = unpackHalf2x16(tile_words[j * kstride + w]);
          dot += qs[qi * qstride + 2u * w] * k2.x + qs[qi * qstride + 2u * w + 1u] * k2.y;
        }
        s = dot * p.scale;
        if (p.softcap > 0.0) s = p.softcap * tanh(clamp(s / p.softcap, -15.0, 15.0));
      }
      sc[qi * (kTile + 1u) + j] = s;
    }
    barrier();
    if (lid < kQueries) {  // the online softmax of query lid over this tile
      float m_new = m;
      for (uint j = 0u; j < kTile; ++j) m_new = max(m_new, sc[lid * (kTile + 1u) + j]);
      const bool none = m_new == -1.0 / 0.0;  // nothing seen yet: keep zeros
      float sum = 0.0;
      for (uint j = 0u; j < kTile; ++j) {
        const float e = none ? 0.0 : exp(sc[lid * (kTile + 1u) + j] - m_new);
        sc[lid * (kTile + 1u) + j] = e;
        sum += e;
      }
      const float f = none ? 1.0 : exp(m - m_new);
      l = l * f + sum;
      m = m_new;
      factor[lid] = f;
    }
    for (uint i = lid; i < kTile * half_hd; i += 64u) {  // every key was read before the last barrier
      const uint j = i / half_hd, w = i - j * half_hd;
      tile_words[j * kstride + w] = j < n ? vc[head_words + (tile + j) * p.row_words + w] : 0u;
    }
    barrier();
    const float f = factor[qi];
    for (uint c = 0u; c < kMaxHeadDim / 8u; ++c) {
      const uint w = jj + 4u * c;
      if (w >= half_hd) break;
      vec2 a = acc[c] * f;
      for (uint j = 0u; j < kTile; ++j) a += sc[qi * (kTile + 1u) + j] * unpackHalf2x16(tile_words[j * kstride + w]);
      acc[c] = a;
    }
    barrier();  // tile_words, sc and factor are rewritten by the next tile
  }
  if (lid < kQueries) sums[lid] = l;
  barrier();
  if (qi >= n_q) return;
  const float inv = 1.0 / sums[qi];
  const uint obase = ((t0 + qi) * p.n_heads + h) * hd;
  for (uint c = 0u; c < kMaxHeadDim / 8u; ++c) {
    const uint w = jj + 4u * c;
    if (w >= half_hd) break;
    o[obase + 2u * w] = acc[c].x * inv;
    o[obase + 2u * w + 1u] = acc[c].y * inv;
  }
}
