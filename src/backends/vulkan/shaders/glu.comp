#version 450
// gate[i] = act(gate[i]) * up[i]: SwiGLU (SiLU) or GeGLU (GELU, tanh approximation).
layout(local_size_x = 256) in;
layout(binding = 0, std430) buffer Gate { float g[]; };
layout(binding = 1, std430) readonly buffer Up { float u[]; };
layout(push_constant) uniform Push {
  uint n;
  uint gelu;
} p;

void main() {
  const uint i = gl_GlobalInvocationID.x + gl_NumWorkGroups.x * 256u * gl_GlobalInvocationID.y;
  if (i >= p.n) return;
  const float x = g[i];
  float a;
  if (p.gelu != 0u) {
    // tanh's argument clamped: some drivers compute tanh through exp, which overflows.
    const float t = clamp(0.7978845608 * (x + 0.044715 * x * x * x), -15.0, 15.0);
    a = 0.5 * x * (1.0 + tanh(t));
  } else {
    a = x / (1.0 + exp(-x));
  }
  g[i] = a * u[i];
}
