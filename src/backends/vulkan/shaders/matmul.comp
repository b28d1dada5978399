#version 450
// Y[t * rows + r] = W[r] . X[t] for many tokens: each workgroup takes 8 rows and a tile of
// 8 tokens, 8 threads a row; a thread dequantizes each 32-column unit it takes once and
// uses it for all 8 tokens (the matvec kernel would decode it once per token).
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 64) in;
layout(binding = 0, std430) readonly buffer Weights { uint w[]; };
layout(binding = 1, std430) readonly buffer Input { vec4 x4[]; };  // rows of a multiple of 32
layout(binding = 2, std430) writeonly buffer Output { float y[]; };
layout(push_constant) uniform Push {
  uint rows, cols;
  uint row_u16;  // a row's size in 16-bit words
  uint n_tokens;
} p;

#include "units.glsl"

const uint kRowsPerGroup = 8u, kThreadsPerRow = 8u, kTokens = 8u;
shared float partial[kTokens][64];

void main() {
  const uint group = gl_WorkGroupID.x + gl_NumWorkGroups.x * gl_WorkGroupID.y;
  const uint t0 = gl_WorkGroupID.z * kTokens, lid = gl_LocalInvocationID.x;
  const uint r = group * kRowsPerGroup + lid / kThreadsPerRow, lane = lid % kThreadsPerRow;
  const uint n = min(kTokens, p.n_tokens - t0);
  float acc[kTokens];
  for (uint t = 0u; t < kTokens; ++t) acc[t] = 0.0;
  if (r < p.rows)
    for (uint u = lane; u < p.cols / 32u; u += kThreadsPerRow) {
      vec4 v[8];
      unit_load(r * p.row_u16, u, v);
      for (uint t = 0u; t < n; ++t) {
        const uint x0 = ((t0 + t) * p.cols + u * 32u) >> 2;
        float s = 0.0;
        for (uint k = 0u; k < 8u; ++k) s += dot(v[k], x4[x0 + k]);
        acc[t] += s;
      }
    }
  for (uint t = 0u; t < kTokens; ++t) partial[t][lid] = acc[t];
  barrier();
  for (uint s = kThreadsPerRow / 2u; s > 0u; s >>= 1) {
    if (lane < s)
      for (uint t = 0u; t < kTokens; ++t) partial[t][lid] += partial[t][lid + s];
    barrier();
  }
  if (lane == 0u && r < p.rows)
    for (uint t = 0u; t < n; ++t) y[(t0 + t) * p.rows + r] = partial[t][lid];
}
