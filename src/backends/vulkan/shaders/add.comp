#version 450
// y[i] += b[i % period] for i < n: the residual add (period n) and bias rows (period d).
layout(local_size_x = 256) in;
layout(binding = 0, std430) buffer Target { float y[]; };
layout(binding = 1, std430) readonly buffer Addend { float b[]; };
layout(push_constant) uniform Push {
  uint n, period;
} p;

void main() {
  const uint i = gl_GlobalInvocationID.x + gl_NumWorkGroups.x * 256u * gl_GlobalInvocationID.y;
  if (i < p.n) y[i] += b[i % p.period];
}
