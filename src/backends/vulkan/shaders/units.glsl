// unit_dot(rb, u, xo): the dot product of the 32 weights of unit u (columns 32u..32u+31) of
// the row whose first 16-bit word is rb with x[xo..xo+31], for the GGUF type chosen by
// TYPE_*. The layouts are GGUF's (tensor/dtype.hpp; the scalar dequantizers are the
// reference the tests compare with). K types: a 256-column super-block holds 8 units.
#include "weights.glsl"

#if defined(TYPE_F32)
float unit_dot(uint rb, uint u, uint xo) {
  const uint base = (rb >> 1) + u * 32u;
  float s = 0.0;
  for (uint i = 0; i < 32u; ++i) s += uintBitsToFloat(w[base + i]) * x[xo + i];
  return s;
}
#elif defined(TYPE_F16)
float unit_dot(uint rb, uint u, uint xo) {
  const uint base = rb + u * 32u;  // 32 halves
  float s = 0.0;
  for (uint i = 0; i < 16u; ++i) {
    const vec2 v = unpackHalf2x16(w[(base >> 1) + i]);
    s += v.x * x[xo + 2u * i] + v.y * x[xo + 2u * i + 1u];
  }
  return s;
}
#elif defined(TYPE_Q4_0)
float unit_dot(uint rb, uint u, uint xo) {
  const uint blk = rb + u * 9u;  // d, 16 bytes of nibbles
  float s = 0.0;
  for (uint i = 0; i < 16u; ++i) {
    const uint q = byte_at(blk + 1u, i);
    s += (float(q & 15u) - 8.0) * x[xo + i] + (float(q >> 4) - 8.0) * x[xo + 16u + i];
  }
  return f16_at(blk) * s;
}
#elif defined(TYPE_Q4_1)
float unit_dot(uint rb, uint u, uint xo) {
  const uint blk = rb + u * 10u;  // d, m, 16 bytes of nibbles
  float s = 0.0, sx = 0.0;
  for (uint i = 0; i < 16u; ++i) {
    const uint q = byte_at(blk + 2u, i);
    s += float(q & 15u) * x[xo + i] + float(q >> 4) * x[xo + 16u + i];
    sx += x[xo + i] + x[xo + 16u + i];
  }
  return f16_at(blk) * s + f16_at(blk + 1u) * sx;
}
#elif defined(TYPE_Q5_0)
float unit_dot(uint rb, uint u, uint xo) {
  const uint blk = rb + u * 11u;  // d, 4 bytes of fifth bits, 16 bytes of nibbles
  const uint qh = u16_at(blk + 1u) | (u16_at(blk + 2u) << 16);
  float s = 0.0;
  for (uint i = 0; i < 16u; ++i) {
    const uint q = byte_at(blk + 3u, i);
    const uint lo = (q & 15u) | (((qh >> i) & 1u) << 4);
    const uint hi = (q >> 4) | (((qh >> (i + 16u)) & 1u) << 4);
    s += (float(lo) - 16.0) * x[xo + i] + (float(hi) - 16.0) * x[xo + 16u + i];
  }
  return f16_at(blk) * s;
}
#elif defined(TYPE_Q5_1)
float unit_dot(uint rb, uint u, uint xo) {
  const uint blk = rb + u * 12u;  // d, m, 4 bytes of fifth bits, 16 bytes of nibbles
  const uint qh = u16_at(blk + 2u) | (u16_at(blk + 3u) << 16);
  float s = 0.0, sx = 0.0;
  for (uint i = 0; i < 16u; ++i) {
    const uint q = byte_at(blk + 4u, i);
    const uint lo = (q & 15u) | (((qh >> i) & 1u) << 4);
    const uint hi = (q >> 4) | (((qh >> (i + 16u)) & 1u) << 4);
    s += float(lo) * x[xo + i] + float(hi) * x[xo + 16u + i];
    sx += x[xo + i] + x[xo + 16u + i];
  }
  return f16_at(blk) * s + f16_at(blk + 1u) * sx;
}
#elif defined(TYPE_Q8_0)
float unit_dot(uint rb, uint u, uint xo) {
  const uint blk = rb + u * 17u;  // d, 32 signed bytes
  float s = 0.0;
  for (uint i = 0; i < 32u; ++i) s += float(s8(byte_at(blk + 1u, i))) * x[xo + i];
  return f16_at(blk) * s;
}
#elif defined(TYPE_Q4_K) || defined(TYPE_Q5_K)
// Sub-block j's 6-bit scale and minimum from the 12 scale bytes after `base`.
void k_scale_min(uint base, uint j, out float sc, out float mn) {
  if (j < 4u) {
    sc = float(byte_at(base, j) & 63u);
    mn = float(byte_at(base, j + 4u) & 63u);
  } else {
    sc = float((byte_at(base, j + 4u) & 15u) | ((byte_at(base, j - 4u) >> 6) << 4));
    mn = float((byte_at(base, j + 4u) >> 4) | ((byte_at(base, j) >> 6) << 4));
  }
}
float unit_dot(uint rb, uint u, uint xo) {
#if defined(TYPE_Q4_K)
  const uint blk = rb + (u >> 3) * 72u;  // d, dmin, 12 scale bytes, 128 bytes of nibbles
  const uint qs = blk + 8u;
#else
  const uint blk = rb + (u >> 3) * 88u;  // d, dmin, 12 scale bytes, 32 bytes of fifth bits, 128 of nibbles
  const uint qs = blk + 24u;
#endif
  const uint j = u & 7u;
  float sc, mn;
  k_scale_min(blk + 2u, j, sc, mn);
  const uint shift = (j & 1u) * 4u;
  float s = 0.0, sx = 0.0;
  for (uint l = 0; l < 32u; ++l) {
    uint q = (byte_at(qs, (j >> 1) * 32u + l) >> shift) & 15u;
#if defined(TYPE_Q5_K)
    q |= ((byte_at(blk + 8u, l) >> j) & 1u) << 4;
#endif
    s += float(q) * x[xo + l];
    sx += x[xo + l];
  }
  return f16_at(blk) * sc * s - f16_at(blk + 1u) * mn * sx;
}
#elif defined(TYPE_Q6_K)
float unit_dot(uint rb, uint u, uint xo) {
  // 128 bytes of low nibbles, 64 of high bit pairs, 16 signed scales, d.
  const uint blk = rb + (u >> 3) * 105u;
  const uint j = u & 7u, h = j >> 2, k = j & 3u;
  const uint ql = 64u * h + ((k & 1u) != 0u ? 32u : 0u);
  const uint nib_shift = k >= 2u ? 4u : 0u;
  float s[2] = {0.0, 0.0};
  for (uint l = 0; l < 32u; ++l) {
    const uint lo = (byte_at(blk, ql + l) >> nib_shift) & 15u;
    const uint hi = (byte_at(blk + 64u, 32u * h + l) >> (2u * k)) & 3u;
    s[l >> 4] += (float(lo | (hi << 4)) - 32.0) * x[xo + l];
  }
  const uint sc = blk + 96u;
  return f16_at(blk + 104u) *
         (float(s8(byte_at(sc, 8u * h + 2u * k))) * s[0] + float(s8(byte_at(sc, 8u * h + 2u * k + 1u))) * s[1]);
}
#else
#error "matvec: no TYPE_* defined"
#endif
