#version 450
// y[t * rows + r] = W[r] . x[t] for one token t (a few tokens: one each in z). Each
// workgroup takes kRows rows (2, or 8 with WIDE); its 64 threads take a row's 32-column units in turn, so
// neighbouring threads read neighbouring blocks, and the sums are added across the
// workgroup: subgroup additions where the device has them (SUBGROUPS), else shared memory.
// With GLU, W is the gate matrix stacked on the up matrix (rows = 2 ff) and the workgroup
// takes rows r of both: y[t * ff + r] = act(gate . x) * (up . x), the FFN's first half in
// one pass. With kNorm, the input rows are RMS-normalized on the way (x / rms(x) * gain, the
// block's norm folded in: each workgroup sums the squares of the whole row it reads anyway);
// with kResidual too, a post-norm's add comes first (matvec_rows.glsl).
#extension GL_GOOGLE_include_directive : require
#if defined(SUBGROUPS)
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#endif

layout(local_size_x = 64) in;
#include "matrix_io.glsl"
#include "units.glsl"
#include "activation.glsl"

const uint kThreads = 64u;
#include "matvec_rows.glsl"

void main() {
  // Row groups beyond the 65535 of one dimension continue in y.
  const uint first = gl_WorkGroupID.x + gl_NumWorkGroups.x * gl_WorkGroupID.y;
  const uint t = gl_WorkGroupID.z, lid = gl_LocalInvocationID.x;
  const uint units = p.cols / 32u, xt = (t * p.cols) >> 2;
  const bool norm = (p.flags & kNorm) != 0u;
  const float rscale = residual_scale(t, lid);
  for (uint group = first; group < row_groups(); group += gl_NumWorkGroups.x * gl_NumWorkGroups.y) {
    const uint r0 = group * kHalf;
    const bool writer = group == 0u;
    float acc[kRows + 1u];
    for (uint i = 0u; i <= kRows; ++i) acc[i] = 0.0;
    for (uint u = lid; u < units; u += kThreads) {
      vec4 xv[8];  // the unit's inputs, read once for all rows
      for (uint k = 0u; k < 8u; ++k) xv[k] = input4(xt + u * 8u + k, u * 8u + k, rscale, writer);
      if (norm)
        for (uint k = 0u; k < 8u; ++k) {
          acc[kRows] += dot(xv[k], xv[k]);
          xv[k] *= gain4[u * 8u + k];
        }
      for (uint i = 0u; i < kRows; ++i) {
        if (!row_in(r0, i)) continue;
        vec4 v[8];
        unit_load(row_of(r0, i) * p.row_u16, u, v);
        float a = 0.0;
        for (uint k = 0u; k < 8u; ++k) a += dot(v[k], xv[k]);
        acc[i] += a;
      }
    }
    finish_rows(acc, t, r0, lid, norm);
  }
}
