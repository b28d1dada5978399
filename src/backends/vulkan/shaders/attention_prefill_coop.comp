#version 450
// attention_prefill.comp on the tensor cores (VK_NV_cooperative_matrix): one 32-lane
// subgroup takes 16 consecutive queries of one head (head size HD, 64, 128 or 256) and
// reads keys and values as fragments straight from the f16 cache. Two passes over the
// positions its queries see, 32 a tile: the first finds each query's largest score and sum
// of exponentials; the second turns the scores into normalized weights (halves) and adds
// weights x values into accumulators that stay in the tensor cores' registers for the whole
// pass. A one-pass online softmax would rescale those accumulators row by row, which their
// opaque layout does not allow, so the scores are computed twice instead. Scores go through
// shared memory for the masks (causality, window) and the softmax: two lanes a query.
// A tile may read up to 31 rows past the last position any query sees: the caller pads the
// cache by a tile and keeps every row finite (zeroed at allocation), since a weight of 0
// times an infinite value would still be NaN.
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_shader_subgroup_shuffle : require

layout(local_size_x = 32) in;
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

const uint kQueries = 16u, kTile = 32u;
// Strides padded by 16 bytes; every fragment starts 16-byte aligned.
const uint kQStride = HD + 8u, kSStride = kTile + 4u, kPStride = kTile + 8u;
shared float16_t qs[kQueries * kQStride];  // the queries, halves
shared float ss[kQueries * kSStride];      // a tile's scores; at the end, output fragments
shared float16_t ps[kQueries * kPStride];  // a tile's weights

#define HALF16 fcoopmatNV<16, gl_ScopeSubgroup, 16, 16>
#define FLOAT16 fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>

void subgroup_sync() {
  subgroupMemoryBarrierShared();
  subgroupBarrier();
}

uint first_seen(uint at) { return (p.window > 0u && at + 1u > p.window) ? at + 1u - p.window : 0u; }

// The raw scores of the 16 queries against the 32 positions whose keys start at word
// `keys` (one position a row_words further), into ss.
void scores(uint keys) {
  FLOAT16 s0 = FLOAT16(0.0), s1 = FLOAT16(0.0);
  for (uint kk = 0u; kk < HD; kk += 16u) {
    HALF16 a, b0, b1;
    coopMatLoadNV(a, qs, kk, kQStride, false);
    coopMatLoadNV(b0, kc, keys + kk / 2u, p.row_words, true);  // K^T: a position's key is a column
    coopMatLoadNV(b1, kc, keys + 16u * p.row_words + kk / 2u, p.row_words, true);
    s0 = coopMatMulAddNV(a, b0, s0);
    s1 = coopMatMulAddNV(a, b1, s1);
  }
  coopMatStoreNV(s0, ss, 0u, kSStride, false);
  coopMatStoreNV(s1, ss, 16u, kSStride, false);
  subgroup_sync();
}

void main() {
  const uint h = gl_WorkGroupID.x, t0 = gl_WorkGroupID.y * kQueries, lane = gl_LocalInvocationID.x;
  const uint kvh = h / (p.n_heads / p.n_kv_heads);
  const uint n_q = min(kQueries, p.n_tokens - t0);
  for (uint i = lane; i < kQueries * HD; i += 32u) {
    const uint qi = i / HD, d = i % HD;
    qs[qi * kQStride + d] = float16_t(qi < n_q ? q[((t0 + qi) * p.n_heads + h) * HD + d] : 0.0);
  }
  // This lane: query r, columns c0 .. c0 + 15 of each tile.
  const uint r = lane / 2u, c0 = (lane % 2u) * 16u;
  const bool real = r < n_q;
  const uint last = real ? pos[t0 + r] : 0u, first = first_seen(last);
  const uint lo = subgroupMin(real ? first : 0xffffffffu), hi = subgroupMax(last);
  const uint head_words = p.layer_words + kvh * (HD / 2u);
  subgroup_sync();
  const float kNone = -1.0 / 0.0;
  float m = kNone, l = 0.0;
  for (uint tile = lo / kTile * kTile; tile <= hi; tile += kTile) {
    scores(head_words + tile * p.row_words);
    float s[16], tile_max = kNone;
    for (uint j = 0u; j < 16u; ++j) {
      const uint at = tile + c0 + j;
      float x = ss[r * kSStride + c0 + j] * p.scale;
      if (p.softcap > 0.0) x = p.softcap * tanh(clamp(x / p.softcap, -15.0, 15.0));
      s[j] = real && at >= first && at <= last ? x : kNone;
      tile_max = max(tile_max, s[j]);
    }
    const float m_new = max(m, max(tile_max, subgroupShuffleXor(tile_max, 1u)));
    float sum = 0.0;
    for (uint j = 0u; j < 16u; ++j) sum += m_new == kNone ? 0.0 : exp(s[j] - m_new);
    sum += subgroupShuffleXor(sum, 1u);
    l = m_new == kNone ? 0.0 : l * exp(m - m_new) + sum;
    m = m_new;
    subgroup_sync();  // ss is rewritten by the next tile
  }
  const float inv_l = l > 0.0 ? 1.0 / l : 0.0;
  FLOAT16 acc[HD / 16u];
  for (uint n = 0u; n < HD / 16u; ++n) acc[n] = FLOAT16(0.0);
  for (uint tile = lo / kTile * kTile; tile <= hi; tile += kTile) {
    const uint words = head_words + tile * p.row_words;
    scores(words);
    for (uint j = 0u; j < 16u; ++j) {
      const uint at = tile + c0 + j;
      float x = ss[r * kSStride + c0 + j] * p.scale;
      if (p.softcap > 0.0) x = p.softcap * tanh(clamp(x / p.softcap, -15.0, 15.0));
      ps[r * kPStride + c0 + j] = float16_t(real && at >= first && at <= last ? exp(x - m) * inv_l : 0.0);
    }
    subgroup_sync();
    HALF16 a0, a1;
    coopMatLoadNV(a0, ps, 0u, kPStride, false);
    coopMatLoadNV(a1, ps, 16u, kPStride, false);
    for (uint n = 0u; n < HD / 16u; ++n) {  // values: positions x dimensions, row-major
      HALF16 b0, b1;
      coopMatLoadNV(b0, vc, words + 8u * n, p.row_words, false);
      coopMatLoadNV(b1, vc, words + 16u * p.row_words + 8u * n, p.row_words, false);
      acc[n] = coopMatMulAddNV(a0, b0, acc[n]);
      acc[n] = coopMatMulAddNV(a1, b1, acc[n]);
    }
    subgroup_sync();  // ss and ps are rewritten by the next tile
  }
  // Each 16 x 16 output fragment through ss: a lane writes 8 values of query r.
  const uint obase = ((t0 + r) * p.n_heads + h) * HD, half8 = (lane % 2u) * 8u;
  for (uint n = 0u; n < HD / 16u; ++n) {
    coopMatStoreNV(acc[n], ss, 0u, kSStride, false);
    subgroup_sync();
    if (real)
      for (uint j = 0u; j < 8u; ++j) o[obase + 16u * n + half8 + j] = ss[r * kSStride + half8 + j];
    subgroup_sync();
  }
}
