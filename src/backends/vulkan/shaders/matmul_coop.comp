#version 450
// Y[t * rows + r] = W[r] . X[t] for many tokens on the tensor cores (VK_NV_cooperative_matrix,
// 16 x 16 x 16 products of halves summed in floats). Each workgroup of four 32-lane subgroups
// computes 64 tokens x 64 rows: per step of 64 columns the threads dequantize the rows'
// 32-column units and convert the tokens' columns into shared memory as halves, then each
// subgroup multiplies its 32 x 32 corner in 2 x 2 fragments. The sums go through shared memory
// to the output, where the bias, the residual and the bounds are applied as in matmul.comp.
#extension GL_GOOGLE_include_directive : require
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require

layout(local_size_x = 128) in;
#include "matrix_io.glsl"
#include "units.glsl"

const uint kRows = 64u, kTokens = 64u, kStep = 64u;
// Row strides padded by 16 bytes (fewer bank conflicts; loads stay 16-byte aligned).
const uint kStride = kStep + 8u, kOutStride = kRows + 4u;
shared float16_t ws[kRows * kStride];   // ws[r * kStride + k]: row r's column k (B, column-major)
shared float16_t xs[kTokens * kStride];  // xs[t * kStride + k]: token t's column k (A, row-major)
shared float cs[kTokens * kOutStride];   // the sums, token-major

#define HALF16 fcoopmatNV<16, gl_ScopeSubgroup, 16, 16>
#define FLOAT16 fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>

void main() {
  const uint group = gl_WorkGroupID.x + gl_NumWorkGroups.x * gl_WorkGroupID.y;
  const uint r0 = group * kRows, t0 = gl_WorkGroupID.z * kTokens, tid = gl_LocalInvocationID.x;
  const uint sg = tid / 32u, tb = (sg >> 1) * 32u, rb = (sg & 1u) * 32u;  // this subgroup's corner
  FLOAT16 acc[2][2];
  for (uint i = 0u; i < 2u; ++i)
    for (uint j = 0u; j < 2u; ++j) acc[i][j] = FLOAT16(0.0);
  const uint units = p.cols / 32u;
  for (uint u0 = 0u; u0 < units; u0 += 2u) {
    {  // weights: 64 rows x 2 units, one a thread
      const uint lr = tid % kRows, lu = tid / kRows, u = u0 + lu;
      vec4 v[8];
      if (r0 + lr < p.rows && u < units) {
        unit_load((r0 + lr) * p.row_u16, u, v);
      } else {
        for (uint k = 0u; k < 8u; ++k) v[k] = vec4(0.0);
      }
      const uint at = lr * kStride + lu * 32u;
      for (uint k = 0u; k < 8u; ++k)
        for (uint c = 0u; c < 4u; ++c) ws[at + 4u * k + c] = float16_t(v[k][c]);
    }
    // tokens: 64 x 64 columns, 8 vec4 a thread
    for (uint i = tid; i < kTokens * kStep / 4u; i += 128u) {
      const uint t = i / (kStep / 4u), k4 = i % (kStep / 4u);
      const bool inside = t0 + t < p.n_tokens && u0 * 32u + 4u * k4 < p.cols;
      const vec4 xv = inside ? x4[((t0 + t) * p.cols + u0 * 32u) / 4u + k4] : vec4(0.0);
      for (uint c = 0u; c < 4u; ++c) xs[t * kStride + 4u * k4 + c] = float16_t(xv[c]);
    }
    barrier();
    for (uint kk = 0u; kk < kStep; kk += 16u) {
      HALF16 a[2], b[2];
      for (uint i = 0u; i < 2u; ++i) coopMatLoadNV(a[i], xs, (tb + 16u * i) * kStride + kk, kStride, false);
      for (uint j = 0u; j < 2u; ++j) coopMatLoadNV(b[j], ws, (rb + 16u * j) * kStride + kk, kStride, true);
      for (uint i = 0u; i < 2u; ++i)
        for (uint j = 0u; j < 2u; ++j) acc[i][j] = coopMatMulAddNV(a[i], b[j], acc[i][j]);
    }
    barrier();
  }
  for (uint i = 0u; i < 2u; ++i)
    for (uint j = 0u; j < 2u; ++j) coopMatStoreNV(acc[i][j], cs, (tb + 16u * i) * kOutStride + rb + 16u * j, kOutStride, false);
  barrier();
  for (uint i = tid; i < kTokens * kRows; i += 128u) {
    const uint t = i / kRows, r = i % kRows;
    if (t0 + t < p.n_tokens && r0 + r < p.rows) store(t0 + t, r0 + r, cs[t * kOutStride + r]);
  }
}
