#version 450
// RoPE in place over n_tokens x n_heads heads of hd values; token t's angles are row t of
// the cos / sin tables (hd / 2 values each). One thread per pair.
layout(local_size_x = 256) in;
layout(binding = 0, std430) buffer X { float x[]; };
layout(binding = 1, std430) readonly buffer Cos { float cs[]; };
layout(binding = 2, std430) readonly buffer Sin { float sn[]; };
layout(push_constant) uniform Push {
  uint n_tokens, n_heads, hd, half_split;
} p;

void main() {
  const uint half_dim = p.hd / 2u;
  const uint id = gl_GlobalInvocationID.x + gl_NumWorkGroups.x * 256u * gl_GlobalInvocationID.y;
  if (id >= p.n_tokens * p.n_heads * half_dim) return;
  const uint i = id % half_dim, head = id / half_dim, t = head / p.n_heads;
  const uint base = head * p.hd;
  const uint a = p.half_split != 0u ? i : 2u * i, b = p.half_split != 0u ? i + half_dim : 2u * i + 1u;
  const float c = cs[t * half_dim + i], s = sn[t * half_dim + i];
  const float xa = x[base + a], xb = x[base + b];
  x[base + a] = xa * c - xb * s;
  x[base + b] = xa * s + xb * c;
}
