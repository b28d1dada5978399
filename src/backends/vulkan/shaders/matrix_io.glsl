// What the matrix kernels (matvec, matmul, matmul_coop) share: their buffers, push constants
// and output. A stacked projection's rows can go to up to three outputs (q, k and v from
// one pass): rows [0, split0) to y, split0 a token; [split0, split1) to y2; the rest to y3.
layout(binding = 0, std430) readonly buffer Weights { uint w[]; };
layout(binding = 0, std430) readonly buffer Weights4 { uvec4 w4[]; };  // the same, 16 bytes at a time
layout(binding = 1, std430) readonly buffer Input { vec4 x4[]; };       // rows of a multiple of 32
layout(binding = 2, std430) buffer Output { float y[]; };
layout(binding = 3, std430) readonly buffer Bias { float bias[]; };
layout(binding = 4, std430) readonly buffer Gain { vec4 gain4[]; };
layout(binding = 5, std430) writeonly buffer Output2 { float y2[]; };
layout(binding = 6, std430) writeonly buffer Output3 { float y3[]; };
layout(push_constant) uniform Push {
  uint rows, cols;
  uint row_u16;  // a row's size in 16-bit words
  uint n_tokens;
  uint flags;  // kAddBias: + bias[r]; kAccumulate: y += the result (a residual); kGelu; kNorm; kResidual
  float eps;   // kNorm's (and kResidual's)
  uint split0, split1;  // rows, rows: one output
} p;
const uint kAddBias = 1u, kAccumulate = 2u, kGelu = 4u, kNorm = 8u, kResidual = 16u;

void store(uint t, uint r, float v) {
  if ((p.flags & kAddBias) != 0u) v += bias[r];
  if (r >= p.split1) {
    y3[t * (p.rows - p.split1) + r - p.split1] = v;
  } else if (r >= p.split0) {
    y2[t * (p.split1 - p.split0) + r - p.split0] = v;
  } else {
    const uint at = t * p.split0 + r;
    y[at] = (p.flags & kAccumulate) != 0u ? y[at] + v : v;
  }
}
