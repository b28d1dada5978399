#version 450
// out[t * ff + i] = act(gate[t * stride + i]) * up[t * stride + up0 + i]: SwiGLU (SiLU) or
// GeGLU (GELU, tanh approximation). The gate and up rows of a token lie side by side
// (stride 2 ff, up0 ff: one matmul of the two matrices stacked) or in two buffers.
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 256) in;
layout(binding = 0, std430) readonly buffer Gate { float g[]; };
layout(binding = 1, std430) readonly buffer Up { float u[]; };
layout(binding = 2, std430) writeonly buffer Out { float o[]; };
layout(push_constant) uniform Push {
  uint n;  // n_tokens * ff
  uint ff, stride, up0;
  uint gelu;
} p;

#include "activation.glsl"

void main() {
  const uint i = gl_GlobalInvocationID.x + gl_NumWorkGroups.x * 256u * gl_GlobalInvocationID.y;
  if (i >= p.n) return;
  const uint t = i / p.ff, c = i % p.ff;
  o[i] = activation(g[t * p.stride + c], p.gelu != 0u) * u[t * p.stride + p.up0 + c];
}
