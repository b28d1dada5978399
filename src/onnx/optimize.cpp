#include "onnx/optimize.hpp"

#include <cmath>
#include <unordered_set>

#include "onnx/ops/op.hpp"

namespace minnow::onnx {

namespace {

bool is_constant(const Graph& g, int id) { return id < 0 || g.constants.count(id); }

// Nodes whose inputs are all constants run once here and become constants.
int fold_constants(Graph& g, int64_t opset) {
  int folded = 0;
  std::vector<Node> kept;
  OpContext ctx{nullptr, opset};
  for (auto& n : g.nodes) {
    bool all = !n.inputs.empty();
    for (int id : n.inputs) all = all && is_constant(g, id);
    if (!all) {
      kept.push_back(std::move(n));
      continue;
    }
    std::vector<const Tensor*> in;
    for (int id : n.inputs) in.push_back(id < 0 ? nullptr : g.constants.at(id).get());
    std::vector<std::shared_ptr<Tensor>> results;
    std::vector<Tensor*> out;
    for (int id : n.outputs) {
      results.push_back(id < 0 ? nullptr : std::make_shared<Tensor>());
      out.push_back(results.back().get());
    }
    find_op(n.op_type)(n, in, out, ctx);
    for (size_t i = 0; i < n.outputs.size(); ++i)
      if (n.outputs[i] >= 0) g.constants[n.outputs[i]] = results[i];
    ++folded;
  }
  g.nodes = std::move(kept);
  return folded;
}

int remove_dead(Graph& g) {
  std::unordered_set<int> live(g.output_ids.begin(), g.output_ids.end());
  std::vector<bool> keep(g.nodes.size(), false);
  for (size_t i = g.nodes.size(); i-- > 0;) {
    for (int id : g.nodes[i].outputs)
      if (id >= 0 && live.count(id)) keep[i] = true;
    if (keep[i])
      for (int id : g.nodes[i].inputs) live.insert(id);
  }
  std::vector<Node> kept;
  int removed = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (keep[i]) kept.push_back(std::move(g.nodes[i]));
    else ++removed;
  }
  g.nodes = std::move(kept);
  for (auto it = g.constants.begin(); it != g.constants.end();)
    it = live.count(it->first) ? std::next(it) : g.constants.erase(it);
  return removed;
}

// Conv (constant weights) -> BatchNormalization (constant statistics), where nothing else
// reads the convolution's output: W' = W * a, B' = (B - mean) * a + beta, a = gamma / sqrt(var + eps).
int fuse_batch_norms(Graph& g) {
  std::unordered_map<int, int> consumers;
  for (auto& n : g.nodes)
    for (int id : n.inputs) ++consumers[id];
  for (int id : g.output_ids) ++consumers[id];
  std::unordered_map<int, size_t> producer;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (int id : g.nodes[i].outputs) producer[id] = i;
  int fused = 0;
  std::vector<bool> drop(g.nodes.size(), false);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    Node& bn = g.nodes[i];
    if (bn.op_type != "BatchNormalization" || bn.inputs.size() != 5 || bn.outputs.size() != 1) continue;
    if (bn.get_int("training_mode", 0)) continue;
    auto p = producer.find(bn.inputs[0]);
    if (p == producer.end()) continue;
    Node& conv = g.nodes[p->second];
    if (conv.op_type != "Conv" || consumers[bn.inputs[0]] != 1 || conv.inputs.size() < 2) continue;
    bool constant = is_constant(g, conv.inputs[1]) && (conv.inputs.size() < 3 || is_constant(g, conv.inputs[2]));
    for (int k = 1; k < 5; ++k) constant = constant && bn.inputs[k] >= 0 && g.constants.count(bn.inputs[k]);
    if (!constant) continue;
    const Tensor& w = *g.constants.at(conv.inputs[1]);
    if (w.dtype() != DataType::Float || w.rank() < 3) continue;
    const int64_t M = w.shape()[0], per = w.size() / std::max<int64_t>(M, 1);
    const Tensor* stats[4];
    bool ok = true;
    for (int k = 0; k < 4; ++k) {
      stats[k] = g.constants.at(bn.inputs[1 + k]).get();
      ok = ok && stats[k]->dtype() == DataType::Float && stats[k]->size() == M;
    }
    const Tensor* b = conv.inputs.size() > 2 && conv.inputs[2] >= 0 ? g.constants.at(conv.inputs[2]).get() : nullptr;
    if (!ok || (b && (b->dtype() != DataType::Float || b->size() != M))) continue;
    const float eps = bn.get_float("epsilon", 1e-5f);
    auto nw = std::make_shared<Tensor>(DataType::Float, w.shape());
    auto nb = std::make_shared<Tensor>(DataType::Float, std::vector<int64_t>{M});
    for (int64_t m = 0; m < M; ++m) {
      const float a = stats[0]->data<float>()[m] / std::sqrt(stats[3]->data<float>()[m] + eps);
      for (int64_t j = 0; j < per; ++j) nw->data<float>()[m * per + j] = w.data<float>()[m * per + j] * a;
      const float bias = b ? b->data<float>()[m] : 0.0f;
      nb->data<float>()[m] = (bias - stats[2]->data<float>()[m]) * a + stats[1]->data<float>()[m];
    }
    // New constants under fresh ids (the originals may be shared with other nodes).
    int wid = g.intern(g.names[conv.inputs[1]] + "#bn" + std::to_string(fused));
    int bid = g.intern(g.names[bn.outputs[0]] + "#bias");
    g.constants[wid] = nw;
    g.constants[bid] = nb;
    conv.inputs.resize(3);
    conv.inputs[1] = wid;
    conv.inputs[2] = bid;
    conv.outputs[0] = bn.outputs[0];
    drop[i] = true;
    ++fused;
  }
  std::vector<Node> kept;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (!drop[i]) kept.push_back(std::move(g.nodes[i]));
  g.nodes = std::move(kept);
  return fused;
}

}  // namespace

OptimizeStats optimize_graph(Graph& g, int64_t opset) {
  OptimizeStats s;
  s.folded = fold_constants(g, opset);
  s.fused_batch_norms = fuse_batch_norms(g);
  s.removed = remove_dead(g);
  return s;
}

}  // namespace minnow::onnx
