// Graph rewrites done once per session: constant folding, dead-node removal, folding
// BatchNormalization and per-channel Mul / Add into the convolution before it, Relu and
// Clip into its store, the exporters' spelled-out HardSwish into one node, and a 1 x 1
// convolution with the depthwise one that alone reads it into one node.
#pragma once
#include "onnx/graph.hpp"

namespace minnow::onnx {

struct OptimizeStats {
  int folded = 0, removed = 0, fused_batch_norms = 0, fused_activations = 0, fused_convs = 0, packed_convs = 0;
};

OptimizeStats optimize_graph(Graph& g, int64_t opset);

}  // namespace minnow::onnx
