#version 450
// y[t * rows + r] = W[r] . x[t] for K-quant rows (256-value super-blocks), one token t in z.
// The workgroup's threads are slots of 16 lanes; a slot takes one super-block of the
// workgroup's kRows rows at a time (the slots stride over the row's super-blocks) and each
// lane 16 of its values: neighbouring lanes read neighbouring bytes of the block and of the
// input, so a subgroup's loads are few and contiguous (matvec.comp's threads each decode a
// whole 32-value unit, 48 or more bytes apart). Each lane's 16 inputs are read once for all
// rows; products are taken on the quantized values and scaled per sub-block:
// d * sc * (q . x) - dmin * mn * sum(x). GLU, WIDE, kNorm and kResidual as in matvec.comp.
#extension GL_GOOGLE_include_directive : require
#if defined(SUBGROUPS)
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#endif

#if defined(THREADS32)
layout(local_size_x = 32) in;
const uint kThreads = 32u;
#elif defined(THREADS128)
layout(local_size_x = 128) in;
const uint kThreads = 128u;
#else
layout(local_size_x = 64) in;
const uint kThreads = 64u;
#endif
#include "matrix_io.glsl"
#include "units.glsl"
#include "activation.glsl"
#include "matvec_rows.glsl"

const uint kLanes = 16u, kSlots = kThreads / kLanes;

#if defined(TYPE_Q4_K) || defined(TYPE_Q5_K)
#if defined(TYPE_Q4_K)
const uint kBlockBytes = 144u, kNibbles = 16u;  // d, dmin, 12 scale bytes | 128 bytes of nibbles
#else
const uint kBlockBytes = 176u, kNibbles = 48u;  // the same with 32 bytes of fifth bits before the nibbles
#endif
// Lane l takes 8 values of sub-blocks 2c and 2c + 1 (c = l / 4: the 32 nibble bytes they
// share, low and high nibbles), positions 8e..8e+7 (e = l % 4) of each.
uint x_offset(uint lane, uint k) { return 64u * (lane >> 2) + 8u * (lane & 3u) + (k >= 2u ? 32u : 0u) + 4u * (k & 1u); }
// Row (first byte rb)'s super-block sb . the lane's inputs xv (xs: their sums, k pairs).
float block_dot(uint rb, uint sb, uint lane, vec4 xv[4], vec2 xs) {
  const uint b = rb + sb * kBlockBytes, c = lane >> 2, e = lane & 3u;
  const uvec4 head = w4[b >> 4];
  const vec2 dm = unpackHalf2x16(head.x);
  vec2 lo, hi;  // sub-blocks 2c and 2c + 1: scale, minimum (units.glsl)
  k_scale_min(head.yzw, 2u * c, lo.x, lo.y);
  k_scale_min(head.yzw, 2u * c + 1u, hi.x, hi.y);
  const uint at = (b + kNibbles + 32u * c + 8u * e) >> 2;
  const uint q0 = w[at], q1 = w[at + 1u];
  vec4 a0 = nibbles_lo(q0), a1 = nibbles_lo(q1), b0 = nibbles_hi(q0), b1 = nibbles_hi(q1);
#if defined(TYPE_Q5_K)
  const uint hat = (b + 16u + 8u * e) >> 2;  // the fifth bits of positions 8e..: bit j of byte p
  const uint h0 = w[hat] >> (2u * c), h1 = w[hat + 1u] >> (2u * c);
  a0 += 16.0 * bytes_u(h0 & 0x01010101u), a1 += 16.0 * bytes_u(h1 & 0x01010101u);
  b0 += 16.0 * bytes_u((h0 >> 1) & 0x01010101u), b1 += 16.0 * bytes_u((h1 >> 1) & 0x01010101u);
#endif
  const float s_lo = dot(a0, xv[0]) + dot(a1, xv[1]), s_hi = dot(b0, xv[2]) + dot(b1, xv[3]);
  return dm.x * (lo.x * s_lo + hi.x * s_hi) - dm.y * (lo.y * xs.x + hi.y * xs.y);
}
#elif defined(TYPE_Q6_K)
// 128 bytes of low nibbles, 64 of high bit pairs, 16 signed scales, d; padded to 224 bytes
// on the device (Ops::upload).
const uint kBlockBytes = 224u;
// Lane l takes half h = l / 8 of the block, positions i..i+3 (i = 4 (l % 8)) of its four
// 32-value quarters.
uint x_offset(uint lane, uint k) { return 128u * (lane >> 3) + 32u * k + 4u * (lane & 7u); }
float block_dot(uint rb, uint sb, uint lane, vec4 xv[4], vec2 xs_unused) {
  const uint b = rb + sb * kBlockBytes, h = lane >> 3, i = 4u * (lane & 7u);
  const uint ql0 = bytes4_at(b + 64u * h + i), ql1 = bytes4_at(b + 64u * h + 32u + i);
  const uint qh = bytes4_at(b + 128u + 32u * h + i);
  const uint sw = b + 192u + 8u * h + (i >> 4);  // scales of the quarters: bytes sw, sw + 2, sw + 4, sw + 6
  const uint s01 = bytes4_at(sw), s23 = bytes4_at(sw + 4u);
  const vec4 sc = vec4(ivec4(uvec4(s01 << 24, s01 << 8, s23 << 24, s23 << 8)) >> 24);
  const float d = unpackHalf2x16(bytes4_at(b + 208u)).x;
  const vec4 q0 = bytes_u((ql0 & 0x0f0f0f0fu) | ((qh << 4) & 0x30303030u));
  const vec4 q1 = bytes_u((ql1 & 0x0f0f0f0fu) | ((qh << 2) & 0x30303030u));
  const vec4 q2 = bytes_u(((ql0 >> 4) & 0x0f0f0f0fu) | (qh & 0x30303030u));
  const vec4 q3 = bytes_u(((ql1 >> 4) & 0x0f0f0f0fu) | ((qh >> 2) & 0x30303030u));
  const vec4 dots = vec4(dot(q0 - 32.0, xv[0]), dot(q1 - 32.0, xv[1]), dot(q2 - 32.0, xv[2]), dot(q3 - 32.0, xv[3]));
  return d * dot(sc, dots);
}
#else
#error "matvec_sb: Q4_K, Q5_K or Q6_K only"
#endif

void main() {
  const uint first = gl_WorkGroupID.x + gl_NumWorkGroups.x * gl_WorkGroupID.y;
  const uint t = gl_WorkGroupID.z, lid = gl_LocalInvocationID.x;
  const uint slot = lid / kLanes, lane = lid % kLanes;
  const uint blocks = p.cols / 256u;
  const bool norm = (p.flags & kNorm) != 0u;
  const float rscale = residual_scale(t, lid);
  for (uint group = first; group < row_groups(); group += gl_NumWorkGroups.x * gl_NumWorkGroups.y) {
    const uint r0 = group * kHalf;
    const bool writer = group == 0u;
    float acc[kRows + 1u];
    for (uint i = 0u; i <= kRows; ++i) acc[i] = 0.0;
    for (uint sb = slot; sb < blocks; sb += kSlots) {
      vec4 xv[4];  // the lane's 16 inputs, read once for all rows
      for (uint k = 0u; k < 4u; ++k) {
        const uint col = 256u * sb + x_offset(lane, k);
        xv[k] = input4((t * p.cols + col) >> 2, col >> 2, rscale, writer);
        if (norm) {
          acc[kRows] += dot(xv[k], xv[k]);
          xv[k] *= gain4[col >> 2];
        }
      }
      const vec2 xs = vec2(dot(xv[0] + xv[1], vec4(1.0)), dot(xv[2] + xv[3], vec4(1.0)));
      for (uint i = 0u; i < kRows; ++i)
        if (row_in(r0, i)) acc[i] += block_dot(2u * row_of(r0, i) * p.row_u16, sb, lane, xv, xs);
    }
    finish_rows(acc, t, r0, lid, norm);
  }
}
