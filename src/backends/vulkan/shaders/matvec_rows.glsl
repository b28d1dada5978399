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
// Groups of kHalf rows (of the gate, and as many of up, with GLU). A workgroup takes
// groups first, first + its grid's size, ...: one, unless Ops capped the grid.
uint row_groups() {
#if defined(GLU)
  return (p.rows / 2u + kHalf - 1u) / kHalf;
#else
  return (p.rows + kHalf - 1u) / kHalf;
#endif
}

// The rows' sums, then the input's sum of squares (kNorm).
shared float partial[kRows + 1u][kThreads];

// The sum of every thread's v, in every thread. Every thread of the workgroup calls it.
float workgroup_sum(float v, uint lid) {
#if defined(SUBGROUPS)
  const float s = subgroupAdd(v);
  if (subgroupElect()) partial[0][gl_SubgroupID] = s;
  barrier();
  float total = 0.0;
  for (uint g = 0u; g < gl_NumSubgroups; ++g) total += partial[0][g];
#else
  partial[0][lid] = v;
  barrier();
  for (uint s = kThreads / 2u; s > 0u; s >>= 1) {
    if (lid < s) partial[0][lid] += partial[0][lid + s];
    barrier();
  }
  const float total = partial[0][0];
#endif
  barrier();  // before partial is written again
  return total;
}

// kResidual (with kNorm): the input row is x + res / rms(res) * post_gain, the previous
// block's output put through its post-norm and added to the residual stream here instead
// of in a pass of its own (Gemma 3). Every workgroup computes it from the rows it reads
// anyway; the first also writes it to x_out, the stream's next buffer (x is read meanwhile).
layout(binding = 7, std430) readonly buffer Residual { vec4 res4[]; };
layout(binding = 8, std430) readonly buffer PostGain { vec4 post_gain4[]; };
layout(binding = 9, std430) writeonly buffer InputOut { vec4 x_out4[]; };

// 1 / rms(res) of token t's row, in every thread (kResidual).
float residual_scale(uint t, uint lid) {
  if ((p.flags & kResidual) == 0u) return 0.0;
  const uint n4 = p.cols / 4u, at = t * n4;
  float s = 0.0;
  for (uint i = lid; i < n4; i += kThreads) s += dot(res4[at + i], res4[at + i]);
  return inversesqrt(workgroup_sum(s, lid) / float(p.cols) + p.eps);
}

// Four inputs: x4[at] (columns 4 col4 ..), plus the post-normed residual with kResidual;
// `writer`: the workgroup that stores that sum.
vec4 input4(uint at, uint col4, float rscale, bool writer) {
  vec4 v = x4[at];
  if ((p.flags & kResidual) != 0u) {
    v += res4[at] * rscale * post_gain4[col4];
    if (writer) x_out4[at] = v;
  }
  return v;
}

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
