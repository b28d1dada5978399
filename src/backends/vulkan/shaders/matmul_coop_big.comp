#version 450
// matmul_coop.comp's product with four times the tile: each workgroup of eight 32-lane
// subgroups computes 128 tokens x 128 rows, so every weight is dequantized once per 128
// tokens and a staged half feeds twice the tensor-core work. Per step of one 32-column unit,
// subgroups 0-3 dequantize the 128 rows' units while subgroups 4-7 convert the tokens'
// columns to halves; the next step's loads are issued before this step's products. The
// weights are staged column by column (ws[k][r]: neighbouring threads store neighbouring
// halves, no bank conflicts) and read as a row-major B. Each subgroup multiplies a corner of
// 32 tokens x 64 rows (2 x 4 fragments). The sums leave through shared memory one band of
// 32 tokens at a time, where the bias, the residual and the bounds are applied.
#extension GL_GOOGLE_include_directive : require
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require

layout(local_size_x = 256) in;
#include "matrix_io.glsl"
#include "units.glsl"

const uint kRows = 128u, kTokens = 128u, kStep = 32u, kBand = 32u;
// Strides padded by 16 bytes; every fragment's start stays 16-byte aligned.
const uint kWStride = kRows + 8u, kXStride = kStep + 8u, kOutStride = kRows + 4u;
shared float16_t ws[kStep * kWStride];    // ws[k * kWStride + r]: row r's column k (B, row-major)
shared float16_t xs[kTokens * kXStride];  // xs[t * kXStride + k]: token t's column k (A, row-major)
shared float cs[kBand * kOutStride];      // one band of the sums, token-major

#define HALF16 fcoopmatNV<16, gl_ScopeSubgroup, 16, 16>
#define FLOAT16 fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>

// This thread's share of step u: its row's unit (subgroups 0-3), or 8 vec4 of the tokens'
// columns (token i / 8, columns 4 * (i % 8) .. of the step, i = tid - 128 + 128 * q).
void fetch(uint u, uint r0, uint t0, uint tid, out vec4 v[8]) {
  if (tid < 128u) {
    if (r0 + tid < p.rows) {
      unit_load((r0 + tid) * p.row_u16, u, v);
    } else {
      for (uint k = 0u; k < 8u; ++k) v[k] = vec4(0.0);
    }
    return;
  }
  for (uint q = 0u; q < 8u; ++q) {
    const uint i = tid - 128u + 128u * q, t = i / 8u;
    v[q] = t0 + t < p.n_tokens ? x4[((t0 + t) * p.cols + u * 32u) / 4u + i % 8u] : vec4(0.0);
  }
}

void main() {
  const uint group = gl_WorkGroupID.x + gl_NumWorkGroups.x * gl_WorkGroupID.y;
  const uint r0 = group * kRows, t0 = gl_WorkGroupID.z * kTokens, tid = gl_LocalInvocationID.x;
  const uint sg = tid / 32u, tb = (sg >> 1) * 32u, rb = (sg & 1u) * 64u;  // this subgroup's corner
  FLOAT16 acc[2][4];
  for (uint i = 0u; i < 2u; ++i)
    for (uint j = 0u; j < 4u; ++j) acc[i][j] = FLOAT16(0.0);
  const uint units = p.cols / 32u;
  vec4 v[8];
  fetch(0u, r0, t0, tid, v);
  for (uint u = 0u; u < units; ++u) {
    if (tid < 128u) {
      for (uint k = 0u; k < 8u; ++k)
        for (uint c = 0u; c < 4u; ++c) ws[(4u * k + c) * kWStride + tid] = float16_t(v[k][c]);
    } else {
      for (uint q = 0u; q < 8u; ++q) {
        const uint i = tid - 128u + 128u * q, at = (i / 8u) * kXStride + 4u * (i % 8u);
        for (uint c = 0u; c < 4u; ++c) xs[at + c] = float16_t(v[q][c]);
      }
    }
    barrier();
    if (u + 1u < units) fetch(u + 1u, r0, t0, tid, v);  // in flight during this step's products
    for (uint kk = 0u; kk < kStep; kk += 16u) {
      HALF16 a[2], b[4];
      for (uint i = 0u; i < 2u; ++i) coopMatLoadNV(a[i], xs, (tb + 16u * i) * kXStride + kk, kXStride, false);
      for (uint j = 0u; j < 4u; ++j) coopMatLoadNV(b[j], ws, kk * kWStride + rb + 16u * j, kWStride, false);
      for (uint i = 0u; i < 2u; ++i)
        for (uint j = 0u; j < 4u; ++j) acc[i][j] = coopMatMulAddNV(a[i], b[j], acc[i][j]);
    }
    barrier();
  }
  for (uint band = 0u; band < kTokens / kBand; ++band) {
    if (tb == band * kBand)
      for (uint i = 0u; i < 2u; ++i)
        for (uint j = 0u; j < 4u; ++j)
          coopMatStoreNV(acc[i][j], cs, 16u * i * kOutStride + rb + 16u * j, kOutStride, false);
    barrier();
    for (uint e = tid; e < kBand * kRows; e += 256u) {
      const uint t = band * kBand + e / kRows, r = e % kRows;
      if (t0 + t < p.n_tokens && r0 + r < p.rows) store(t0 + t, r0 + r, cs[(e / kRows) * kOutStride + r]);
    }
    barrier();
  }
}
