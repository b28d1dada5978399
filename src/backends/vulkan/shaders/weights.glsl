// Reading GGUF blocks from a buffer of 32-bit words: every block type's size is even, so a
// block starts on a 16-bit boundary; no 8- or 16-bit storage feature is needed.
uint u16_at(uint i) { return (w[i >> 1] >> ((i & 1u) << 4)) & 0xffffu; }
float f16_at(uint i) { return unpackHalf2x16(u16_at(i)).x; }
// Byte b after the 16-bit word `base`.
uint byte_at(uint base, uint b) { return (u16_at(base + (b >> 1)) >> ((b & 1u) << 3)) & 0xffu; }
int s8(uint b) { return int(b << 24) >> 24; }
