#version 450
// Y[t * rows + r] = W[r] . X[t] for many tokens, tiled: each workgroup computes 64 rows x
// 32 tokens (NARROW: 16 tokens with half the threads, for matrices of few rows, whose wide
// tiles would leave a large GPU's compute units idle). Per step of 64 columns the threads
// dequantize the rows' 32-column units into shared memory (every weight is decoded once per
// tile of tokens) and copy the tokens' columns beside them; then each thread accumulates a
// 4 x 4 block of outputs from shared memory.
#extension GL_GOOGLE_include_directive : require

#if defined(NARROW)
const uint kThreads = 64u, kTokens = 16u;
#else
const uint kThreads = 128u, kTokens = 32u;
#endif
layout(local_size_x = kThreads) in;
#include "matrix_io.glsl"
#include "units.glsl"

const uint kRows = 64u, kStep = 64u;
// Column-major tiles: ws[k][r / 4] holds rows r..r+3 of column k (vec4 reads in the loop).
shared vec4 ws[kStep][kRows / 4u];
shared vec4 xs[kStep][kTokens / 4u];

void main() {
  const uint group = gl_WorkGroupID.x + gl_NumWorkGroups.x * gl_WorkGroupID.y;
  const uint r0 = group * kRows, t0 = gl_WorkGroupID.z * kTokens, tid = gl_LocalInvocationID.x;
  // The block this thread accumulates: rows r0 + 4 * bm .., tokens t0 + 4 * bn ..
  const uint bm = tid % 16u, bn = tid / 16u;
  vec4 acc[4];
  for (uint j = 0u; j < 4u; ++j) acc[j] = vec4(0.0);
  const uint units = p.cols / 32u;
  for (uint u0 = 0u; u0 < units; u0 += 2u) {
    // weights: 64 rows x 2 units, one or two a thread
    for (uint i = tid; i < 2u * kRows; i += kThreads) {
      const uint lr = i % kRows, lu = i / kRows, u = u0 + lu;
      vec4 v[8];
      if (r0 + lr < p.rows && u < units) {
        unit_load((r0 + lr) * p.row_u16, u, v);
      } else {
        for (uint k = 0u; k < 8u; ++k) v[k] = vec4(0.0);
      }
      for (uint k = 0u; k < 8u; ++k)
        for (uint c = 0u; c < 4u; ++c) ws[lu * 32u + 4u * k + c][lr / 4u][lr % 4u] = v[k][c];
    }
    // tokens: kTokens x 64 columns, 4 vec4 a thread
    for (uint i = tid; i < kTokens * kStep / 4u; i += kThreads) {
      const uint t = i / (kStep / 4u), k4 = i % (kStep / 4u);
      const bool inside = t0 + t < p.n_tokens && u0 * 32u + 4u * k4 < p.cols;
      const vec4 xv = inside ? x4[((t0 + t) * p.cols + u0 * 32u) / 4u + k4] : vec4(0.0);
      for (uint c = 0u; c < 4u; ++c) xs[4u * k4 + c][t / 4u][t % 4u] = xv[c];
    }
    barrier();
    for (uint k = 0u; k < kStep; ++k) {
      const vec4 a = ws[k][bm], b = xs[k][bn];
      acc[0] += a * b.x;
      acc[1] += a * b.y;
      acc[2] += a * b.z;
      acc[3] += a * b.w;
    }
    barrier();
  }
  for (uint j = 0u; j < 4u; ++j) {
    const uint t = t0 + 4u * bn + j;
    if (t >= p.n_tokens) break;
    for (uint i = 0u; i < 4u; ++i) {
      const uint r = r0 + 4u * bm + i;
      if (r < p.rows) store(t, r, acc[j][i]);
    }
  }
}
