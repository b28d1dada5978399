#version 450
// Attention of one query head of one token over the f16 cache: positions lo..pos[t] of
// its KV head, in tiles of 32 with an online softmax. Keys and values are read straight from
// the cache into registers, each thread's loads independent of one another (scores: 32
// positions x 2 halves of a row, a thread each; values: a word of two dimensions a thread
// for all 32 positions). Staging each tile in shared memory first (coalesced loads, two more
// barriers a tile) made decode 10-30% slower on an H100 (docs/vulkan.md). One workgroup per (head, token,
// split): with n_splits > 1 the positions are cut into chunks, each workgroup writes its
// chunk's maximum, sum and unnormalized output to `part`, and the last of the (head, token)'s
// workgroups to finish (a counter in `part`) combines them (short prompts and decode would
// otherwise keep a few workgroups busy on a large GPU; a separate merge pass would cost a
// dispatch and a barrier a layer).
// With `fresh` (one token: decode), its key and value at pos[0] come from the projections k
// and v, rotated by RoPE and rounded to f16 here as store_kv.comp does, and its query is
// rotated on loading; every workgroup keeps that row in shared memory, and the one whose
// chunk holds it in the first query head of each KV head writes it into the cache, so a
// decode pass needs no store_kv dispatch and barrier. The heads' RMS norms before RoPE
// (Gemma 3's QK norms: kQNorm, kKNorm in `fresh`) are taken here too.
#extension GL_GOOGLE_include_directive : require
#if defined(SUBGROUPS)
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#endif
layout(local_size_x = 64) in;
layout(binding = 0, std430) readonly buffer Q { float q[]; };
layout(binding = 1, std430) readonly buffer KCache { uint kc[]; };
layout(binding = 2, std430) readonly buffer VCache { uint vc[]; };
// The same caches for fresh's one writer (readonly views keep the reads on the read-only path).
layout(binding = 1, std430) writeonly buffer KCacheOut { uint kc_out[]; };
layout(binding = 2, std430) writeonly buffer VCacheOut { uint vc_out[]; };
layout(binding = 3, std430) readonly buffer Pos { uint pos[]; };
layout(binding = 4, std430) writeonly buffer Out { float o[]; };
// Per split: m, l, hd sums (as float bits); from count_at, one counter per (head, token), zero
// between passes.
layout(binding = 5, std430) coherent buffer Part { uint part[]; };
// With fresh: the token's keys and values (n_kv_heads x hd) and its RoPE angles.
layout(binding = 6, std430) readonly buffer K { float k[]; };
layout(binding = 7, std430) readonly buffer V { float v[]; };
layout(binding = 8, std430) readonly buffer Cos { float cs[]; };
layout(binding = 9, std430) readonly buffer Sin { float sn[]; };
layout(binding = 10, std430) readonly buffer QNorm { float q_gain[]; };
layout(binding = 11, std430) readonly buffer KNorm { float k_gain[]; };
layout(push_constant) uniform Push {
  uint n_heads, n_kv_heads, hd;
  uint layer_words, row_words;
  float scale, softcap;
  uint window;  // positions a query sees, itself included; 0: all
  uint n_splits;
  uint count_at;  // the counters' first word in part
  uint fresh;  // 0, or kFresh with kQNorm / kKNorm
  uint half_split;
  float eps;  // the QK norms'
} p;
#include "rope.glsl"
const uint kFresh = 1u, kQNorm = 2u, kKNorm = 4u;

const uint kMaxHeadDim = 256u, kTile = 32u;
shared float qs[kMaxHeadDim];
// With fresh: the token's own key and value row (f16 pairs), read in place of the cache's.
shared uint fresh_k[kMaxHeadDim / 2u], fresh_v[kMaxHeadDim / 2u];
shared float scores[kTile];
shared float red[64];
const uint kMaxSplits = 512u;
shared float weight[kMaxSplits];  // the merge's: split s's share exp(m_s - m), 0 when empty
shared bool merging;

// The maximum / sum over the workgroup's 64 threads: subgroup operations and one shared
// slot per subgroup where the device has them (SUBGROUPS), else a tree in shared memory.
#if defined(SUBGROUPS)
float reduce_max(float v, uint lid) {
  v = subgroupMax(v);
  if (subgroupElect()) red[gl_SubgroupID] = v;
  barrier();
  float r = red[0];
  for (uint g = 1u; g < gl_NumSubgroups; ++g) r = max(r, red[g]);
  barrier();
  return r;
}

float reduce_sum(float v, uint lid) {
  v = subgroupAdd(v);
  if (subgroupElect()) red[gl_SubgroupID] = v;
  barrier();
  float r = red[0];
  for (uint g = 1u; g < gl_NumSubgroups; ++g) r += red[g];
  barrier();
  return r;
}
#else
float reduce_max(float v, uint lid) {
  red[lid] = v;
  barrier();
  for (uint s = 32u; s > 0u; s >>= 1) {
    if (lid < s) red[lid] = max(red[lid], red[lid + s]);
    barrier();
  }
  const float r = red[0];
  barrier();
  return r;
}

float reduce_sum(float v, uint lid) {
  red[lid] = v;
  barrier();
  for (uint s = 32u; s > 0u; s >>= 1) {
    if (lid < s) red[lid] += red[lid + s];
    barrier();
  }
  const float r = red[0];
  barrier();
  return r;
}
#endif

// The head's RMS scale when its norm is on (q_scale, k_scale), else 1.
float q_scale = 1.0, k_scale = 1.0;
// Element e of a head at base of q (from_q) or k, RMS-normalized where that norm is on.
float normed(bool from_q, uint base, uint e) {
  if (from_q) return (p.fresh & kQNorm) != 0u ? q[base + e] * q_scale * q_gain[e] : q[base + e];
  return (p.fresh & kKNorm) != 0u ? k[base + e] * k_scale * k_gain[e] : k[base + e];
}
// The same after RoPE with token 0's angles (rope.glsl, as store_kv.comp).
float rotated(bool from_q, uint base, uint e) {
  const RopePair r = rope_pair(e, p.hd, p.half_split != 0u);
  return rope_turn(normed(from_q, base, r.a), normed(from_q, base, r.b), cs[r.i], sn[r.i], r.second);
}

// With fresh: the position whose row comes from k and v (none otherwise).
uint fresh_pos = 0xffffffffu;

void main() {
  const uint h = gl_WorkGroupID.x, t = gl_WorkGroupID.y, split = gl_WorkGroupID.z, lid = gl_LocalInvocationID.x;
  const uint kvh = h / (p.n_heads / p.n_kv_heads);
  const uint hd = p.hd, half_hd = hd / 2u;
  const uint first_seen = (p.window > 0u && pos[t] + 1u > p.window) ? pos[t] + 1u - p.window : 0u;
  // The positions seen, cut into n_splits chunks of whole tiles: computed here from the
  // position, so a recorded pass spreads the work over all its workgroups as the cache fills.
  const uint span = pos[t] + 1u - first_seen;
  const uint chunk = ((span + p.n_splits - 1u) / p.n_splits + kTile - 1u) / kTile * kTile;
  // Only the first `used` splits have positions: the others leave at once, and a single
  // used split writes the output itself.
  const uint used = (span + chunk - 1u) / chunk;
  if (split >= used) return;
  const uint first = first_seen + split * chunk;
  const uint last = min(pos[t], first + chunk - 1u);
  const uint qbase = (t * p.n_heads + h) * hd;
  const bool fresh = p.fresh != 0u;
  const uint kv_base = kvh * hd;  // the KV head's keys and values in k and v (fresh)
  if ((p.fresh & (kQNorm | kKNorm)) != 0u) {
    float qq = 0.0, kk = 0.0;
    for (uint i = lid; i < hd; i += 64u) qq += q[qbase + i] * q[qbase + i], kk += k[kv_base + i] * k[kv_base + i];
    q_scale = inversesqrt(reduce_sum(qq, lid) / float(hd) + p.eps);
    k_scale = inversesqrt(reduce_sum(kk, lid) / float(hd) + p.eps);
  }
  for (uint i = lid; i < hd; i += 64u) qs[i] = fresh ? rotated(true, qbase, i) : q[qbase + i];
  const uint head_words = p.layer_words + kvh * half_hd;
  if (fresh) {
    fresh_pos = pos[0];
    const bool writer = h % (p.n_heads / p.n_kv_heads) == 0u && fresh_pos >= first && fresh_pos <= last;
    for (uint w = lid; w < half_hd; w += 64u) {
      const uint e = kv_base + 2u * w, at = head_words + fresh_pos * p.row_words + w;
      const uint kw = packHalf2x16(vec2(rotated(false, kv_base, 2u * w), rotated(false, kv_base, 2u * w + 1u)));
      const uint vw = packHalf2x16(vec2(v[e], v[e + 1u]));
      fresh_k[w] = kw, fresh_v[w] = vw;
      if (writer) kc_out[at] = kw, vc_out[at] = vw;
    }
  }
  barrier();  // qs, fresh_k, fresh_v

  float m = -1.0 / 0.0, l = 0.0;
  vec2 acc[kMaxHeadDim / 128u];  // words lid, lid + 64: dimensions 2 w, 2 w + 1
  for (uint c = 0u; c < kMaxHeadDim / 128u; ++c) acc[c] = vec2(0.0);
  // Score phase: position lid % 32 of the tile, the first or second half of its words.
  const uint jj = lid & 31u, half_words = (half_hd + 1u) / 2u;
  const uint w_begin = (lid >> 5) * half_words, w_end = min(half_hd, w_begin + half_words);
  for (uint tile = first; tile <= last; tile += kTile) {
    const uint n = min(kTile, last + 1u - tile);
    float dot = 0.0;
    if (jj < n && tile + jj == fresh_pos)
      for (uint w = w_begin; w < w_end; ++w) {
        const vec2 k2 = unpackHalf2x16(fresh_k[w]);
        dot += qs[2u * w] * k2.x + qs[2u * w + 1u] * k2.y;
      }
    else if (jj < n) {
      const uint at = head_words + (tile + jj) * p.row_words;
      for (uint w = w_begin; w < w_end; ++w) {
        const vec2 k2 = unpackHalf2x16(kc[at + w]);
        dot += qs[2u * w] * k2.x + qs[2u * w + 1u] * k2.y;
      }
    }
    red[lid] = dot;
    barrier();
    float s = -1.0 / 0.0;
    if (lid < n) {
      s = (red[lid] + red[lid + 32u]) * p.scale;
      if (p.softcap > 0.0) s = p.softcap * tanh(clamp(s / p.softcap, -15.0, 15.0));
    }
    barrier();  // red[] is reused by the reductions
    const float m_new = max(m, reduce_max(s, lid));
    const float e = lid < n ? exp(s - m_new) : 0.0;
    if (lid < kTile) scores[lid] = e;
    const float factor = exp(m - m_new);  // 0 on the first tile (m = -inf)
    l = l * factor + reduce_sum(e, lid);  // its barriers also publish scores[]
    m = m_new;
    // The cache's rows but the fresh one (jf; n when not in this tile), then that one.
    const uint jf = min(fresh_pos - tile, n);  // unsigned: n for positions before the tile too
    for (uint c = 0u; c < kMaxHeadDim / 128u; ++c) {
      const uint w = lid + 64u * c;
      if (w >= half_hd) break;
      vec2 a = acc[c] * factor;
      const uint at = head_words + tile * p.row_words + w;
      for (uint j = 0u; j < jf; ++j) a += scores[j] * unpackHalf2x16(vc[at + j * p.row_words]);
      for (uint j = jf + 1u; j < n; ++j) a += scores[j] * unpackHalf2x16(vc[at + j * p.row_words]);
      if (jf < n) a += scores[jf] * unpackHalf2x16(fresh_v[w]);
      acc[c] = a;
    }
    barrier();  // scores[] is rewritten by the next tile
  }
  if (used == 1u) {
    for (uint c = 0u; c < kMaxHeadDim / 128u; ++c) {
      const uint w = lid + 64u * c;
      if (w < half_hd) o[qbase + 2u * w] = acc[c].x / l, o[qbase + 2u * w + 1u] = acc[c].y / l;
    }
    return;
  }
  const uint pair = t * p.n_heads + h, pstride = hd + 2u, base = pair * p.n_splits * pstride;
  const uint pbase = base + split * pstride;
  if (lid == 0u) part[pbase] = floatBitsToUint(m), part[pbase + 1u] = floatBitsToUint(l);
  for (uint c = 0u; c < kMaxHeadDim / 128u; ++c) {
    const uint w = lid + 64u * c;
    if (w < half_hd) part[pbase + 2u + 2u * w] = floatBitsToUint(acc[c].x), part[pbase + 3u + 2u * w] = floatBitsToUint(acc[c].y);
  }
  // Publish this split, then count it: the workgroup that counts last merges.
  memoryBarrierBuffer();
  barrier();
  if (lid == 0u) {
    merging = atomicAdd(part[p.count_at + pair], 1u) == used - 1u;
    if (merging) part[p.count_at + pair] = 0u;  // ready for the next pass
  }
  barrier();
  if (!merging) return;
  memoryBarrierBuffer();
  // Each split's sums rescaled to the largest maximum, then divided by the total weight
  // (every used split saw at least one position: l > 0).
  float mx = -1.0 / 0.0;
  for (uint sp = lid; sp < used; sp += 64u) mx = max(mx, uintBitsToFloat(part[base + sp * pstride]));
  mx = reduce_max(mx, lid);
  float total = 0.0;
  for (uint sp = lid; sp < used; sp += 64u) {
    weight[sp] = exp(uintBitsToFloat(part[base + sp * pstride]) - mx);
    total += uintBitsToFloat(part[base + sp * pstride + 1u]) * weight[sp];
  }
  total = reduce_sum(total, lid);  // its barriers also publish weight[]
  // Four independent sums a thread, so that four splits' loads are in flight at once.
  for (uint d = lid; d < hd; d += 64u) {
    vec4 a = vec4(0.0);
    uint sp = 0u;
    for (; sp + 4u <= used; sp += 4u) {
      const uint at = base + sp * pstride + 2u + d;
      a += vec4(uintBitsToFloat(part[at]), uintBitsToFloat(part[at + pstride]), uintBitsToFloat(part[at + 2u * pstride]),
                uintBitsToFloat(part[at + 3u * pstride])) *
           vec4(weight[sp], weight[sp + 1u], weight[sp + 2u], weight[sp + 3u]);
    }
    for (; sp < used; ++sp) a.x += uintBitsToFloat(part[base + sp * pstride + 2u + d]) * weight[sp];
    o[qbase + d] = (a.x + a.y + a.z + a.w) / total;
  }
}
