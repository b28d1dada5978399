// What the matrix-vector kernels (matvec.comp, matvec_sb.comp) share: the rows a workgroup
// takes (kRows from r0; with GLU rows of the gate and the same of up) and the end of the
// pass: the threads' sums added across the workgroup (subgroup additions where the device
// has them, SUBGROUPS, else shared memory), then the outputs stored. Needs kThreads.
// Rows a workgroup takes: more (WIDE) for matrices of many rows, where the input row, read
// again by every workgroup, would otherwise cost more than the weights.
#if defined(GLU)
#if defined(WIDE)
const uint kHalf = 4u;
#else
const uint kHalf = 2u;
#endif
const uint kRows = 2u * kHalf;  // rows r0.. of the gate, then the same of up
uint row_of(uint r0, uint i) { return i < kHalf ? r0 + i : p.rows / 2u + r0 + i - kHalf; }
bool row_in(uint r0, uint i) { return r0 + (i % kHalf) < p.rows / 2u; }
#else
#if defined(WIDE)
const uint kHalf = 8u;
#else
const uint kHalf = 2u;
#endif
const uint kRows = kHalf;
uint row_of(uint r0, uint i) { return r0 + i; }
bool row_in(uint r0, uint i) { return r0 + i < p.rows; }
#endif
// The rows' sums, then the input's sum of squares (kNorm).
shared float partial[kRows + 1u][kThreads];

// acc[i]: this thread's share of row i's product; acc[kRows]: of the input's sum of squares
// (norm). Every thread of the workgroup calls it.
void finish_rows(float acc[kRows + 1u], uint t, uint r0, uint lid, bool norm) {
#if defined(SUBGROUPS)
  for (uint i = 0u; i <= kRows; ++i) {
    const float s = subgroupAdd(acc[i]);
    if (subgroupElect()) partial[i][gl_SubgroupID] = s;
  }
  barrier();
  if (lid <= kRows) {
    float s = 0.0;
    for (uint g = 0u; g < gl_NumSubgroups; ++g) s += partial[lid][g];
    partial[lid][0] = s;
  }
  barrier();
#else
  for (uint i = 0u; i <= kRows; ++i) partial[i][lid] = acc[i];
  barrier();
  for (uint s = kThreads / 2u; s > 0u; s >>= 1) {
    if (lid < s)
      for (uint i = 0u; i <= kRows; ++i) partial[i][lid] += partial[i][lid + s];
    barrier();
  }
#endif
  const float scale = norm ? inversesqrt(partial[kRows][0] / float(p.cols) + p.eps) : 1.0;
#if defined(GLU)
  const uint ff = p.rows / 2u;
  if (lid < kHalf && r0 + lid < ff)
    y[t * ff + r0 + lid] = activation(partial[lid][0] * scale, (p.flags & kGelu) != 0u) * (partial[lid + kHalf][0] * scale);
#else
  if (lid < kRows && r0 + lid < p.rows) store(t, r0 + lid, partial[lid][0] * scale);
#endif
}
