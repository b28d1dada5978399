#version 450
// y row r = x row (x_row0 + r) / sqrt(mean(x^2) + eps) * g, or y row r += that (accumulate:
// a post-norm added to the residual in the same pass): one workgroup per row.
#if defined(SUBGROUPS)
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#endif
layout(local_size_x = 256) in;
layout(binding = 0, std430) readonly buffer Input { float x[]; };
layout(binding = 1, std430) readonly buffer Gain { float g[]; };
layout(binding = 2, std430) buffer Output { float y[]; };
layout(push_constant) uniform Push {
  uint rows, d;
  float eps;
  uint x_row0;
  uint accumulate;
} p;

shared float partial[256];

void main() {
  const uint r = gl_WorkGroupID.x + gl_NumWorkGroups.x * gl_WorkGroupID.y;
  if (r >= p.rows) return;
  const uint lid = gl_LocalInvocationID.x, base = (p.x_row0 + r) * p.d, dst = r * p.d;
  float acc = 0.0;
  for (uint i = lid; i < p.d; i += 256u) acc += x[base + i] * x[base + i];
#if defined(SUBGROUPS)
  acc = subgroupAdd(acc);
  if (subgroupElect()) partial[gl_SubgroupID] = acc;
  barrier();
  float sum = 0.0;
  for (uint g = 0u; g < gl_NumSubgroups; ++g) sum += partial[g];
#else
  partial[lid] = acc;
  barrier();
  for (uint s = 128u; s > 0u; s >>= 1) {
    if (lid < s) partial[lid] += partial[lid + s];
    barrier();
  }
  const float sum = partial[0];
#endif
  const float scale = inversesqrt(sum / float(p.d) + p.eps);
  if (p.accumulate != 0u)
    for (uint i = lid; i < p.d; i += 256u) y[dst + i] += x[base + i] * scale * g[i];
  else
    for (uint i = lid; i < p.d; i += 256u) y[dst + i] = x[base + i] * scale * g[i];
}
