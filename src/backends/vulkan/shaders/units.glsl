// unit_load(rb, u, v): the 32 weights of unit u (columns 32u..32u+31) of the row whose first
// 16-bit word is rb, dequantized into v (8 vec4, columns 4k..4k+3 in v[k]), for the GGUF type
// chosen by TYPE_*. The layouts are GGUF's (tensor/dtype.hpp; the scalar dequantizers are
// the reference the tests compare with). K types: a 256-column super-block holds 8 units.
#include "weights.glsl"

#if defined(TYPE_F32)
void unit_load(uint rb, uint u, out vec4 v[8]) {
  const uint base = (rb >> 1) + u * 32u;
  for (uint k = 0u; k < 8u; ++k)
    v[k] = uintBitsToFloat(uvec4(w[base + 4u * k], w[base + 4u * k + 1u], w[base + 4u * k + 2u], w[base + 4u * k + 3u]));
}
#elif defined(TYPE_F16)
void unit_load(uint rb, uint u, out vec4 v[8]) {
  const uint base = (rb >> 1) + u * 16u;  // 32 halves; rows of a multiple of 32 halves
  for (uint k = 0u; k < 8u; ++k) v[k] = vec4(unpackHalf2x16(w[base + 2u * k]), unpackHalf2x16(w[base + 2u * k + 1u]));
}
#elif defined(TYPE_BF16)
vec2 bf16_pair(uint x) { return uintBitsToFloat(uvec2(x << 16, x & 0xffff0000u)); }
void unit_load(uint rb, uint u, out vec4 v[8]) {
  const uint base = (rb >> 1) + u * 16u;  // 32 bfloat16 values
  for (uint k = 0u; k < 8u; ++k) v[k] = vec4(bf16_pair(w[base + 2u * k]), bf16_pair(w[base + 2u * k + 1u]));
}
#elif defined(TYPE_Q4_0) || defined(TYPE_Q4_1)
void unit_load(uint rb, uint u, out vec4 v[8]) {
#if defined(TYPE_Q4_0)
  // Blocks widened to 20 bytes on the device (device_block): d, 2 spare bytes, 16 bytes of
  // nibbles (element i low nibble, 16 + i high).
  const uint blk = rb + u * 10u, qs = blk + 2u;
  const float d = f16_at(blk), m = -8.0 * d;
#else
  const uint blk = rb + u * 10u, qs = blk + 2u;  // d, m, 16 bytes of nibbles
  const float d = f16_at(blk), m = f16_at(blk + 1u);
#endif
  for (uint k = 0u; k < 4u; ++k) {
    const uint q = w[(qs >> 1) + k];  // 20-byte blocks: 32-bit aligned
    v[k] = nibbles_lo(q) * d + m;
    v[k + 4u] = nibbles_hi(q) * d + m;
  }
}
#elif defined(TYPE_Q5_0) || defined(TYPE_Q5_1)
void unit_load(uint rb, uint u, out vec4 v[8]) {
#if defined(TYPE_Q5_0)
  // Widened to 24 bytes on the device (device_block): d, 2 spare bytes, 4 bytes of fifth bits, nibbles.
  const uint blk = rb + u * 12u, hb = blk + 2u, qs = blk + 4u;
  const float d = f16_at(blk), m = -16.0 * d;
#else
  const uint blk = rb + u * 12u, hb = blk + 2u, qs = blk + 4u;  // d, m, fifth bits, nibbles
  const float d = f16_at(blk), m = f16_at(blk + 1u);
#endif
  const uint qh = w[hb >> 1];
  for (uint k = 0u; k < 4u; ++k) {
    const uint q = w[(qs >> 1) + k];  // 24-byte blocks: 32-bit aligned
    v[k] = (nibbles_lo(q) + 16.0 * bits4(qh, 4u * k)) * d + m;
    v[k + 4u] = (nibbles_hi(q) + 16.0 * bits4(qh, 16u + 4u * k)) * d + m;
  }
}
#elif defined(TYPE_Q8_0)
void unit_load(uint rb, uint u, out vec4 v[8]) {
  // Widened to 36 bytes on the device (device_block): d, 2 spare bytes, 32 signed bytes.
  const uint blk = (rb >> 1) + u * 9u;
  const float d = unpackHalf2x16(w[blk]).x;
  for (uint k = 0u; k < 8u; ++k) v[k] = bytes_s(w[blk + 1u + k]) * d;
}
#elif defined(TYPE_Q4_K) || defined(TYPE_Q5_K)
// Blocks of 144 / 176 bytes, both multiples of 16, so every block (rows are whole blocks)
// starts on a 16-byte boundary and is read as uvec4s (w4 aliases w).
// Sub-block j's 6-bit scale and minimum from the 12 scale bytes s.
uint scale_byte(uvec3 s, uint b) { return (s[b >> 2] >> ((b & 3u) * 8u)) & 0xffu; }
void k_scale_min(uvec3 s, uint j, out float sc, out float mn) {
  if (j < 4u) {
    sc = float(scale_byte(s, j) & 63u);
    mn = float(scale_byte(s, j + 4u) & 63u);
  } else {
    sc = float((scale_byte(s, j + 4u) & 15u) | ((scale_byte(s, j - 4u) >> 6) << 4));
    mn = float((scale_byte(s, j + 4u) >> 4) | ((scale_byte(s, j) >> 6) << 4));
  }
}
void unit_load(uint rb, uint u, out vec4 v[8]) {
#if defined(TYPE_Q4_K)
  const uint blk = (rb >> 3) + (u >> 3) * 9u;  // in uvec4s: d, dmin, 12 scale bytes | 128 bytes of nibbles
  const uint qs = blk + 1u;
#else
  const uint blk = (rb >> 3) + (u >> 3) * 11u;  // d, dmin, 12 scale bytes | 32 bytes of fifth bits | 128 of nibbles
  const uint qs = blk + 3u;
#endif
  const uint j = u & 7u;
  const uvec4 head = w4[blk];
  float sc, mn;
  k_scale_min(head.yzw, j, sc, mn);
  const vec2 dm = unpackHalf2x16(head.x);
  const float d = dm.x * sc, m = -dm.y * mn;
  // Sub-blocks 2c and 2c + 1 share 32 bytes: the low and the high nibbles.
  const uint shift = (j & 1u) * 4u, at = qs + (j >> 1) * 2u;
  const uvec4 q4[2] = uvec4[2](w4[at], w4[at + 1u]);
#if defined(TYPE_Q5_K)
  const uvec4 h4[2] = uvec4[2](w4[blk + 1u], w4[blk + 2u]);
#endif
  for (uint k = 0u; k < 8u; ++k) {
    vec4 q = bytes_u((q4[k >> 2][k & 3u] >> shift) & 0x0f0f0f0fu);
#if defined(TYPE_Q5_K)
    q += 16.0 * bytes_u((h4[k >> 2][k & 3u] >> j) & 0x01010101u);
#endif
    v[k] = q * d + m;
  }
}
#elif defined(TYPE_Q6_K)
// Blocks padded to 224 bytes on the device (Ops::upload): 14 uvec4, the first 13 GGUF's
// (128 bytes of low nibbles, 64 of high bit pairs, 16 signed scales, d).
void unit_load(uint rb, uint u, out vec4 v[8]) {
  const uint blk = (rb >> 3) + (u >> 3) * 14u;
  const uint j = u & 7u, h = j >> 2, k = j & 3u;
  const uint ql = blk + 4u * h + 2u * (k & 1u), qh = blk + 8u + 2u * h;
  const uint nib_shift = k >= 2u ? 4u : 0u;
  const uvec4 lo4[2] = uvec4[2](w4[ql], w4[ql + 1u]), hi4[2] = uvec4[2](w4[qh], w4[qh + 1u]);
  const uvec4 tail = w4[blk + 12u];  // the 16 scales, then (in the next word) d
  const uint sc = (tail[h * 2u + (k >> 1)] >> ((k & 1u) * 16u)) & 0xffffu;  // the scales of columns 0..15 and 16..31
  const float d = unpackHalf2x16(w4[blk + 13u].x).x;
  const float d0 = d * float(int(sc << 24) >> 24), d1 = d * float(int(sc << 16) >> 24);
  for (uint i = 0u; i < 8u; ++i) {
    const uint lo = (lo4[i >> 2][i & 3u] >> nib_shift) & 0x0f0f0f0fu;
    const uint hi = (hi4[i >> 2][i & 3u] >> (2u * k)) & 0x03030303u;
    v[i] = (bytes_u(lo | (hi << 4)) - 32.0) * (i < 4u ? d0 : d1);
  }
}
#else
#error "matvec: no TYPE_* defined"
#endif
