#version 450
// y[t * rows + r] = W[r] . x[t]: each workgroup takes 8 rows of one token, 8 threads a row;
// a row's threads take its 32-column units in turn and add their sums in shared memory.
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

const uint kRowsPerGroup = 8u, kThreadsPerRow = 8u;
shared float partial[64];

void main() {
  // Row groups beyond the 65535 of one dimension continue in y.
  const uint group = gl_WorkGroupID.x + gl_NumWorkGroups.x * gl_WorkGroupID.y;
  const uint t = gl_WorkGroupID.z, lid = gl_LocalInvocationID.x;
  const uint r = group * kRowsPerGroup + lid / kThreadsPerRow, lane = lid % kThreadsPerRow;
  float acc = 0.0;
  if (r < p.rows)
    for (uint u = lane; u < p.cols / 32u; u += kThreadsPerRow) {
      vec4 v[8];
      unit_load(r * p.row_u16, u, v);
      const uint x0 = (t * p.cols + u * 32u) >> 2;
      for (uint k = 0u; k < 8u; ++k) acc += dot(v[k], x4[x0 + k]);
    }
  partial[lid] = acc;
  barrier();
  for (uint s = kThreadsPerRow / 2u; s > 0u; s >>= 1) {
    if (lane < s) partial[lid] += partial[lid + s];
    barrier();
  }
  if (lane == 0u && r < p.rows) y[t * p.rows + r] = partial[lid];
}
