// ONNX loader: any input must parse or throw minnow::Error; a parsed graph must be
// consistent: nodes in topological order, every input defined before its use, constants
// holding exactly the bytes their shapes need. The same bytes as a TensorProto (the
// backend tests' .pb files) likewise.
#include <unordered_set>

#include "base/error.hpp"
#include "fuzz_target.hpp"
#include "onnx/graph.hpp"

MINNOW_FUZZ_TARGET(onnx) {
  using minnow::fuzz::fuzz_check;
  using namespace minnow::onnx;
  std::span<const uint8_t> bytes(data, size);
  try {
    Graph g = parse_model(bytes);
    std::unordered_set<int> defined(g.input_ids.begin(), g.input_ids.end());
    for (auto& [id, t] : g.constants) {
      defined.insert(id);
      fuzz_check(t && t->bytes() == static_cast<size_t>(t->size()) * dtype_size(t->dtype()), "constant size");
    }
    for (const Node& n : g.nodes) {
      for (int id : n.inputs) fuzz_check(id < 0 || defined.count(id), "input used before it is defined");
      for (int id : n.outputs)
        if (id >= 0) defined.insert(id);
    }
    for (int id : g.output_ids) fuzz_check(defined.count(id) > 0, "output never defined");
    fuzz_check(g.output_ids.size() == g.outputs.size(), "outputs unresolved");
  } catch (const minnow::Error&) {
  }
  try {
    Tensor t = parse_tensor(bytes);
    fuzz_check(t.bytes() == static_cast<size_t>(t.size()) * dtype_size(t.dtype()), "tensor size");
  } catch (const minnow::Error&) {
  }
}
