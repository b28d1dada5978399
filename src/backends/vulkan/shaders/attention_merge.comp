#version 450
// The splits of attention.comp for one (head, token) combined: each split's sums rescaled
// to the largest maximum, then divided by the total weight.
layout(local_size_x = 64) in;
layout(binding = 0, std430) readonly buffer Part { float part[]; };
layout(binding = 1, std430) writeonly buffer Out { float o[]; };
layout(push_constant) uniform Push {
  uint n_heads, hd, n_splits;
} p;

void main() {
  const uint h = gl_WorkGroupID.x, t = gl_WorkGroupID.y, lid = gl_LocalInvocationID.x;
  const uint stride = p.hd + 2u, base = (t * p.n_heads + h) * p.n_splits * stride;
  float m = -1.0 / 0.0;
  for (uint s = 0u; s < p.n_splits; ++s)
    if (part[base + s * stride + 1u] > 0.0) m = max(m, part[base + s * stride]);
  float l = 0.0;
  for (uint s = 0u; s < p.n_splits; ++s) {
    const float ls = part[base + s * stride + 1u];
    if (ls > 0.0) l += ls * exp(part[base + s * stride] - m);
  }
  for (uint d = lid; d < p.hd; d += 64u) {
    float acc = 0.0;
    for (uint s = 0u; s < p.n_splits; ++s) {
      const float ls = part[base + s * stride + 1u];
      if (ls > 0.0) acc += part[base + s * stride + 2u + d] * exp(part[base + s * stride] - m);
    }
    o[(t * p.n_heads + h) * p.hd + d] = acc / l;
  }
}
