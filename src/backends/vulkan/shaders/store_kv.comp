#version 450
// The f16 KV cache write: token t's keys, rotated by RoPE, and its values, rounded to f16,
// into the cache rows of position pos[t]. One thread per pair of values (one 32-bit word).
// With n_q_heads > 0 the queries are rotated in place too (as rope.comp: one pass less),
// one thread per pair of them.
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 256) in;
layout(binding = 0, std430) readonly buffer K { float k[]; };
layout(binding = 1, std430) readonly buffer V { float v[]; };
layout(binding = 2, std430) readonly buffer Cos { float cs[]; };
layout(binding = 3, std430) readonly buffer Sin { float sn[]; };
layout(binding = 4, std430) readonly buffer Pos { uint pos[]; };
layout(binding = 5, std430) writeonly buffer KCache { uint kc[]; };
layout(binding = 6, std430) writeonly buffer VCache { uint vc[]; };
layout(binding = 7, std430) buffer Q { float q[]; };
layout(push_constant) uniform Push {
  uint n_tokens, n_kv_heads, hd, half_split;
  uint layer_words;  // the layer's first word in the caches
  uint row_words;    // words per position (n_kv_heads * hd / 2)
  uint n_q_heads;    // 0: no queries to rotate
} p;
#include "rope.glsl"

// Key element e of the head at k[base..] after RoPE with the angles at row `ang` of the tables.
float rotated_k(uint base, uint e, uint ang) {
  const RopePair r = rope_pair(e, p.hd, p.half_split != 0u);
  return rope_turn(k[base + r.a], k[base + r.b], cs[ang + r.i], sn[ang + r.i], r.second);
}

void main() {
  const uint words = p.row_words, half_dim = p.hd / 2u;
  const uint id = gl_GlobalInvocationID.x + gl_NumWorkGroups.x * 256u * gl_GlobalInvocationID.y;
  if (id < p.n_tokens * p.n_q_heads * half_dim) {
    const uint i = id % half_dim, head = id / half_dim, t = head / p.n_q_heads, base = head * p.hd;
    const RopePair r = rope_pair(p.half_split != 0u ? i : 2u * i, p.hd, p.half_split != 0u);
    const float c = cs[t * half_dim + i], s = sn[t * half_dim + i], xa = q[base + r.a], xb = q[base + r.b];
    q[base + r.a] = rope_turn(xa, xb, c, s, false);
    q[base + r.b] = rope_turn(xa, xb, c, s, true);
  }
  if (id >= p.n_tokens * words) return;
  const uint t = id / words, w = id % words;
  const uint head = (2u * w) / p.hd, e = (2u * w) % p.hd;
  const uint base = t * words * 2u + head * p.hd, ang = t * (p.hd / 2u);
  const float k0 = rotated_k(base, e, ang), k1 = rotated_k(base, e + 1u, ang);
  const uint at = p.layer_words + pos[t] * words + w;
  kc[at] = packHalf2x16(vec2(k0, k1));
  vc[at] = packHalf2x16(vec2(v[base + e], v[base + e + 1u]));
}
