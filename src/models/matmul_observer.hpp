// A hook that sees the input of every weight matmul of a forward pass (for `minnow imatrix`,
// which sums the squared activations per input column). Unset, it costs one null check per
// matmul.
#pragma once
#include <cstdint>

namespace minnow {

// Which weight(s) the input feeds. Q, K and V share one input, as do gate and up.
enum class MatmulSite { AttnQkv, AttnOut, FfnGateUp, FfnDown, Output };

class MatmulObserver {
 public:
  virtual ~MatmulObserver() = default;
  // x: rows x cols floats, row-major (cols = the weight's row length). layer is -1 for Output.
  virtual void observe(int layer, MatmulSite site, const float* x, int rows, int64_t cols) = 0;
};

}  // namespace minnow
