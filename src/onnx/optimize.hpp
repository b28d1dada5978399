// Graph rewrites done once per session: constant folding, dead-node removal, and folding
// BatchNormalization into the convolution before it.
#pragma once
#include "onnx/graph.hpp"

namespace minnow::onnx {

struct OptimizeStats {
  int folded = 0, removed = 0, fused_batch_norms = 0;
};

OptimizeStats optimize_graph(Graph& g, int64_t opset);

}  // namespace minnow::onnx
