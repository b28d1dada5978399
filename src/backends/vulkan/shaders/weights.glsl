// Reading GGUF blocks from a buffer of 32-bit words: every block type's size is even, so a
// block starts on a 16-bit boundary; no 8- or 16-bit storage feature is needed. The buffer
// has one spare word at the end (Ops::upload), so bytes4_at may read one word past a block.
uint u16_at(uint i) { return (w[i >> 1] >> ((i & 1u) << 4)) & 0xffffu; }
float f16_at(uint i) { return unpackHalf2x16(u16_at(i)).x; }
// The 4 bytes from byte b on, at any byte offset (the spare word covers the last block).
uint bytes4_at(uint b) {
  const uint i = b >> 2, s = (b & 3u) * 8u;
  const uint lo = w[i];
  return s == 0u ? lo : (lo >> s) | (w[i + 1u] << (32u - s));
}
// The four bytes of q, low byte first, as unsigned or signed values.
vec4 bytes_u(uint q) { return vec4((uvec4(q) >> uvec4(0u, 8u, 16u, 24u)) & 0xffu); }
vec4 bytes_s(uint q) { return vec4(ivec4(uvec4(q) << uvec4(24u, 16u, 8u, 0u)) >> 24); }
// The low / high nibbles of q's four bytes.
vec4 nibbles_lo(uint q) { return bytes_u(q & 0x0f0f0f0fu); }
vec4 nibbles_hi(uint q) { return bytes_u((q >> 4) & 0x0f0f0f0fu); }
// Bits b..b+3 of h, one per lane.
vec4 bits4(uint h, uint b) { return vec4((uvec4(h >> b) >> uvec4(0u, 1u, 2u, 3u)) & 1u); }
