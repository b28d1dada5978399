#version 450
// y[t * rows + r] = W[r] . x[t]: one workgroup per (row, token); its threads take the row's
// 32-column units in turn and add their sums in shared memory.
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 64) in;
layout(binding = 0, std430) readonly buffer Weights { uint w[]; };
layout(binding = 1, std430) readonly buffer Input { float x[]; };
layout(binding = 2, std430) writeonly buffer Output { float y[]; };
layout(push_constant) uniform Push {
  uint rows, cols;
  uint row_u16;  // a row's size in 16-bit words
  uint n_tokens;
} p;

#include "units.glsl"

shared float partial[64];

void main() {
  // Rows beyond the 65535 groups of one dimension continue in y.
  const uint r = gl_WorkGroupID.x + gl_NumWorkGroups.x * gl_WorkGroupID.y;
  const uint t = gl_WorkGroupID.z;
  if (r >= p.rows) return;  // the same for the whole workgroup
  const uint lid = gl_LocalInvocationID.x;
  float acc = 0.0;
  for (uint u = lid; u < p.cols / 32u; u += 64u) acc += unit_dot(r * p.row_u16, u, t * p.cols + u * 32u);
  partial[lid] = acc;
  barrier();
  for (uint s = 32u; s > 0u; s >>= 1) {
    if (lid < s) partial[lid] += partial[lid + s];
    barrier();
  }
  if (lid == 0u) y[t * p.rows + r] = partial[0];
}
