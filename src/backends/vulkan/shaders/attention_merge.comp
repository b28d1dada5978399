#version 450
// The splits of attention.comp for one (head, token) combined: each split's sums rescaled
// to the largest maximum, then divided by the total weight.
layout(local_size_x = 64) in;
layout(binding = 0, std430) readonly buffer Part { float part[]; };
layout(binding = 1, std430) writeonly buffer Out { float o[]; };
layout(push_constant) uniform Push {
  uint n_heads, hd, n_splits;
} p;

const uint kMaxSplits = 512u;
shared float weight[kMaxSplits];  // split s's share: exp(m_s - m) (0 for an empty split)
shared float red[64];

void main() {
  const uint h = gl_WorkGroupID.x, t = gl_WorkGroupID.y, lid = gl_LocalInvocationID.x;
  const uint stride = p.hd + 2u, base = (t * p.n_heads + h) * p.n_splits * stride;
  // The largest maximum over the non-empty splits, then their weights and the total.
  float m = -1.0 / 0.0;
  for (uint s = lid; s < p.n_splits; s += 64u)
    if (part[base + s * stride + 1u] > 0.0) m = max(m, part[base + s * stride]);
  red[lid] = m;
  barrier();
  for (uint k = 32u; k > 0u; k >>= 1) {
    if (lid < k) red[lid] = max(red[lid], red[lid + k]);
    barrier();
  }
  m = red[0];
  barrier();
  float l = 0.0;
  for (uint s = lid; s < p.n_splits; s += 64u) {
    const float ls = part[base + s * stride + 1u];
    weight[s] = ls > 0.0 ? exp(part[base + s * stride] - m) : 0.0;
    l += ls * weight[s];
  }
  red[lid] = l;
  barrier();
  for (uint k = 32u; k > 0u; k >>= 1) {
    if (lid < k) red[lid] += red[lid + k];
    barrier();
  }
  l = red[0];
  for (uint d = lid; d < p.hd; d += 64u) {
    float acc = 0.0;
    for (uint s = 0u; s < p.n_splits; ++s)
      if (weight[s] > 0.0) acc += part[base + s * stride + 2u + d] * weight[s];
    o[(t * p.n_heads + h) * p.hd + d] = acc / l;
  }
}
