// RoPE as the CPU's rope: element e of a head of hd values pairs with its neighbour
// (2i, 2i + 1), or, when split, with the element half a head away (i, i + hd / 2); the pair
// turns by angle i.
struct RopePair {
  uint i, a, b;  // the angle, the pair's first and second element
  bool second;   // e is b
};
RopePair rope_pair(uint e, uint hd, bool split) {
  const uint half_dim = hd / 2u;
  RopePair r;
  r.second = split ? e >= half_dim : (e & 1u) != 0u;
  r.i = split ? (r.second ? e - half_dim : e) : e >> 1;
  r.a = split ? r.i : 2u * r.i;
  r.b = split ? r.i + half_dim : 2u * r.i + 1u;
  return r;
}
// Element a (or b, second) of the pair (xa, xb) turned by the angle of cosine c, sine s.
float rope_turn(float xa, float xb, float c, float s, bool second) { return second ? xa * s + xb * c : xa * c - xb * s; }
