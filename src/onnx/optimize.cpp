#include "onnx/optimize.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_set>

#include "onnx/ops/op.hpp"

namespace minnow::onnx {

namespace {

bool is_constant(const Graph& g, int id) { return id < 0 || g.constants.count(id); }

// How many nodes (and graph outputs) read each value.
std::unordered_map<int, int> count_readers(const Graph& g) {
  std::unordered_map<int, int> readers;
  for (auto& n : g.nodes)
    for (int id : n.inputs) ++readers[id];
  for (int id : g.output_ids) ++readers[id];
  return readers;
}

// Value id -> index of the node that produces it (outputs) or the last node reading it (inputs).
std::unordered_map<int, size_t> node_index(const Graph& g, bool by_outputs) {
  std::unordered_map<int, size_t> index;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (int id : by_outputs ? g.nodes[i].outputs : g.nodes[i].inputs) index[id] = i;
  return index;
}

// The rewrites mark a node for removal by clearing its op_type.
void drop_cleared(Graph& g) {
  g.nodes.erase(std::remove_if(g.nodes.begin(), g.nodes.end(), [](const Node& n) { return n.op_type.empty(); }),
                g.nodes.end());
}

void set_attr(Node& n, const char* name, float f, int64_t i = 0, bool is_int = false) {
  for (auto& a : n.attrs)
    if (a.name == name) {
      a.f = f;
      a.i = i;
      return;
    }
  Attribute a;
  a.kind = is_int ? Attribute::Kind::Int : Attribute::Kind::Float;
  a.name = name;
  a.f = f;
  a.i = i;
  n.attrs.push_back(a);
}

// Nodes whose inputs are all constants run once here and become constants.
int fold_constants(Graph& g, int64_t opset) {
  int folded = 0;
  std::vector<Node> kept;
  OpContext ctx;
  ctx.opset = opset;
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
  auto consumers = count_readers(g);
  auto producer = node_index(g, true);
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

// A constant's values as one per channel of M (a scalar repeats), or empty when it holds
// anything else (shapes [M], [M,1,1], [1,M,1,1], [1] or []).
std::vector<float> per_channel(const Graph& g, int id, int64_t M, int rank) {
  auto it = g.constants.find(id);
  if (it == g.constants.end() || it->second->dtype() != DataType::Float) return {};
  const Tensor& t = *it->second;
  const float* v = t.data<float>();
  if (t.size() == 1) return std::vector<float>(M, v[0]);
  if (t.size() != M || t.rank() > rank) return {};
  // The one non-1 dimension must be the channel axis (axis 1 of the output).
  const int channel_axis = t.rank() - (rank - 1);
  for (int d = 0; d < t.rank(); ++d)
    if ((d == channel_axis) != (t.shape()[d] == M && M != 1) && t.shape()[d] != 1) return {};
  if (M > 1 && (channel_axis < 0 || t.shape()[channel_axis] != M)) return {};
  return {v, v + M};
}

// Chains after a convolution with constant weights fold into it: a per-channel Mul and
// Add (the export of a BatchNormalization or an affine layer) into the weights and bias, a
// Relu or a Clip with constant bounds into the GEMM's clamp (attributes minnow_lo / minnow_hi).
int fuse_into_convs(Graph& g) {
  int fused = 0;
  for (bool changed = true; changed;) {
    changed = false;
    auto consumers = count_readers(g);
    auto reader = node_index(g, false);
    for (size_t ci = 0; ci < g.nodes.size() && !changed; ++ci) {
      Node& conv = g.nodes[ci];
      if (conv.op_type != "Conv" || conv.outputs.size() != 1 || conv.inputs.size() < 2) continue;
      const int out = conv.outputs[0];
      if (consumers[out] != 1 || !reader.count(out)) continue;
      Node& next = g.nodes[reader[out]];
      if (next.outputs.size() != 1) continue;
      auto wit = g.constants.find(conv.inputs[1]);
      if (wit == g.constants.end() || wit->second->dtype() != DataType::Float || wit->second->rank() < 3) continue;
      const Tensor& w = *wit->second;
      const int64_t M = w.shape()[0], per = w.size() / std::max<int64_t>(M, 1);
      const bool clamped = conv.find("minnow_lo") || conv.find("minnow_hi") || conv.find("minnow_hard_swish");
      std::vector<float> bias(M, 0.0f);
      if (conv.inputs.size() > 2 && conv.inputs[2] >= 0) {
        auto bit = g.constants.find(conv.inputs[2]);
        if (bit == g.constants.end() || bit->second->size() != M) continue;
        bias.assign(bit->second->data<float>(), bit->second->data<float>() + M);
      }
      bool ok = false;
      if ((next.op_type == "Mul" || next.op_type == "Add") && next.inputs.size() == 2 && !clamped) {
        const int other = next.inputs[0] == out ? next.inputs[1] : next.inputs[0];
        std::vector<float> c = per_channel(g, other, M, w.rank());
        if (!c.empty()) {
          auto nw = std::make_shared<Tensor>(w);
          for (int64_t m = 0; m < M; ++m) {
            if (next.op_type == "Mul") {
              for (int64_t j = 0; j < per; ++j) nw->data<float>()[m * per + j] *= c[m];
              bias[m] *= c[m];
            } else {
              bias[m] += c[m];
            }
          }
          auto nb = std::make_shared<Tensor>(DataType::Float, std::vector<int64_t>{M});
          std::copy(bias.begin(), bias.end(), nb->data<float>());
          const int wid = g.intern(g.names[next.outputs[0]] + "#w"), bid = g.intern(g.names[next.outputs[0]] + "#b");
          g.constants[wid] = nw;
          g.constants[bid] = nb;
          conv.inputs.resize(3);
          conv.inputs[1] = wid;
          conv.inputs[2] = bid;
          ok = true;
        }
      } else if (next.op_type == "HardSwish" && !conv.find("minnow_hard_swish")) {
        set_attr(conv, "minnow_hard_swish", 0, 1, true);
        set_attr(conv, "minnow_scale", next.get_float("minnow_scale", 1.0f));
        set_attr(conv, "minnow_shift", next.get_float("minnow_shift", 0.0f));
        ok = true;
      } else if (next.op_type == "Relu" && !clamped) {
        set_attr(conv, "minnow_lo", 0.0f);
        ok = true;
      } else if (next.op_type == "Clip" && !clamped) {
        float lo = -std::numeric_limits<float>::infinity(), hi = std::numeric_limits<float>::infinity();
        bool bounds = true;
        if (next.find("min") || next.find("max")) {  // opset < 11
          lo = next.get_float("min", lo);
          hi = next.get_float("max", hi);
        }
        for (size_t k = 1; k < next.inputs.size(); ++k) {
          if (next.inputs[k] < 0) continue;
          auto it = g.constants.find(next.inputs[k]);
          if (it == g.constants.end() || it->second->dtype() != DataType::Float || it->second->size() != 1) bounds = false;
          else (k == 1 ? lo : hi) = it->second->data<float>()[0];
        }
        if (bounds) {
          set_attr(conv, "minnow_lo", lo);
          set_attr(conv, "minnow_hi", hi);
          ok = true;
        }
      }
      if (!ok) continue;
      conv.outputs[0] = next.outputs[0];
      next.op_type = "";
      drop_cleared(g);
      ++fused;
      changed = true;
    }
  }
  return fused;
}

// x * Clip(x + 3, 0, 6) / 6 (HardSwish as exporters spell it) -> one HardSwish node.
int fuse_hard_swish(Graph& g) {
  auto scalar = [&](int id, float want) {
    auto it = g.constants.find(id);
    return it != g.constants.end() && it->second->dtype() == DataType::Float && it->second->size() == 1 &&
           it->second->data<float>()[0] == want;
  };
  auto consumers = count_readers(g);
  auto producer = node_index(g, true);
  auto made_by = [&](int id, const char* op) -> Node* {
    auto it = producer.find(id);
    return it != producer.end() && g.nodes[it->second].op_type == op ? &g.nodes[it->second] : nullptr;
  };
  int fused = 0;
  for (auto& div : g.nodes) {
    if (div.op_type != "Div" || div.inputs.size() != 2 || !scalar(div.inputs[1], 6.0f)) continue;
    Node* mul = made_by(div.inputs[0], "Mul");
    if (!mul || mul->inputs.size() != 2 || consumers[mul->outputs[0]] != 1) continue;
    for (int side = 0; side < 2; ++side) {
      const int x = mul->inputs[side];
      Node* clip = made_by(mul->inputs[1 - side], "Clip");
      if (!clip || consumers[clip->outputs[0]] != 1 || clip->inputs.size() != 3 || !scalar(clip->inputs[1], 0.0f) ||
          !scalar(clip->inputs[2], 6.0f))
        continue;
      Node* add = made_by(clip->inputs[0], "Add");
      if (!add || consumers[add->outputs[0]] != 1 || add->inputs.size() != 2) continue;
      if (!((add->inputs[0] == x && scalar(add->inputs[1], 3.0f)) || (add->inputs[1] == x && scalar(add->inputs[0], 3.0f))))
        continue;
      div.op_type = "HardSwish";
      div.inputs = {x};
      div.attrs.clear();
      mul->op_type = clip->op_type = add->op_type = "";
      ++fused;
      break;
    }
  }
  drop_cleared(g);
  // A scalar Mul and then a scalar Add after it (a learnable affine layer) go into its
  // attributes minnow_scale / minnow_shift.
  consumers = count_readers(g);
  auto reader = node_index(g, false);
  auto scalar_value = [&](int id, float* v) {
    auto it = g.constants.find(id);
    if (it == g.constants.end() || it->second->dtype() != DataType::Float || it->second->size() != 1) return false;
    *v = it->second->data<float>()[0];
    return true;
  };
  for (auto& hs : g.nodes) {
    if (hs.op_type != "HardSwish" || hs.find("minnow_scale")) continue;
    float scale = 1, shift = 0;
    for (const char* op : {"Mul", "Add"}) {
      const int out = hs.outputs[0];
      if (consumers[out] != 1 || !reader.count(out)) break;
      Node& next = g.nodes[reader[out]];
      if (next.op_type != op || next.inputs.size() != 2 || next.outputs.size() != 1) break;
      float c;
      if (!scalar_value(next.inputs[0] == out ? next.inputs[1] : next.inputs[0], &c)) break;
      if (*op == 'M') { scale *= c; shift *= c; }
      else shift += c;
      hs.outputs[0] = next.outputs[0];
      next.op_type = "";
      ++fused;
    }
    set_attr(hs, "minnow_scale", scale);
    set_attr(hs, "minnow_shift", shift);
  }
  drop_cleared(g);
  return fused;
}

bool float_constant(const Graph& g, int id, int rank) {
  auto it = g.constants.find(id);
  return it != g.constants.end() && it->second->dtype() == DataType::Float && it->second->rank() == rank;
}

bool all_equal(const std::vector<int64_t>& v, int64_t want) {
  return std::all_of(v.begin(), v.end(), [&](int64_t x) { return x == want; });
}

// A Conv with constant float 1 x 1 filters (and bias), stride 1, no padding, one group.
bool plain_pointwise(const Graph& g, const Node& n) {
  if (n.op_type != "Conv" || n.outputs.size() != 1 || n.inputs.size() < 2 || !float_constant(g, n.inputs[1], 4)) return false;
  const Tensor& w = *g.constants.at(n.inputs[1]);
  if (w.shape()[2] != 1 || w.shape()[3] != 1 || n.get_int("group", 1) != 1) return false;
  if (!all_equal(n.get_ints("strides"), 1) || !all_equal(n.get_ints("pads"), 0) || !all_equal(n.get_ints("dilations"), 1) ||
      n.get_string("auto_pad", "NOTSET") == "SAME_UPPER" || n.get_string("auto_pad", "NOTSET") == "SAME_LOWER")
    return false;
  const std::vector<int64_t> kernel = n.get_ints("kernel_shape");
  if (!kernel.empty() && kernel != std::vector<int64_t>{1, 1}) return false;
  return n.inputs.size() < 3 || n.inputs[2] < 0 || float_constant(g, n.inputs[2], 1);
}

// The filters of a plain_pointwise node packed by pack_filters8, as a new constant (the
// original may be shared with other nodes).
int packed_filters(Graph& g, const Node& n) {
  const Tensor& w = *g.constants.at(n.inputs[1]);
  const int64_t m = w.shape()[0], k = w.shape()[1];
  auto packed = std::make_shared<Tensor>(DataType::Float, std::vector<int64_t>{(m + 7) / 8, k, 8});
  pack_filters8(w.data<float>(), m, k, packed->data<float>());
  const int id = g.intern(g.names[n.inputs[1]] + "#packed8");
  g.constants[id] = packed;
  return id;
}

// A 1 x 1 convolution (stride 1, no padding) whose only reader is a depthwise convolution
// of its output -> one MinnowPointwiseDepthwise node (ops/nn_ops.cpp), which never writes
// the expanded tensor out: the depthwise node's inputs become (x, the 1 x 1's filters
// packed, its bias, its own filters and bias), the 1 x 1's epilogue attributes move over as
// minnow_pw_*.
int fuse_pointwise_depthwise(Graph& g) {
  auto consumers = count_readers(g);
  auto reader = node_index(g, false);
  int fused = 0;
  for (Node& pw : g.nodes) {
    if (!plain_pointwise(g, pw)) continue;
    const bool bias1 = pw.inputs.size() > 2 && pw.inputs[2] >= 0;
    const int mid = pw.outputs[0];
    if (consumers[mid] != 1 || !reader.count(mid)) continue;
    Node& dw = g.nodes[reader[mid]];
    const int64_t M = g.constants.at(pw.inputs[1])->shape()[0];
    if (dw.op_type != "Conv" || dw.outputs.size() != 1 || dw.inputs.size() < 2 || dw.inputs[0] != mid ||
        !float_constant(g, dw.inputs[1], 4) || dw.get_int("group", 1) != M || M < 2)
      continue;
    const Tensor& wd = *g.constants.at(dw.inputs[1]);
    if (wd.shape()[0] != M || wd.shape()[1] != 1 || !all_equal(dw.get_ints("dilations"), 1)) continue;
    // A kernel_shape that disagrees with the filters stays on Conv, which refuses it.
    const std::vector<int64_t> kernel = dw.get_ints("kernel_shape");
    if (!kernel.empty() && kernel != std::vector<int64_t>{wd.shape()[2], wd.shape()[3]}) continue;
    const bool bias_d = dw.inputs.size() > 2 && dw.inputs[2] >= 0;
    if (bias_d && !float_constant(g, dw.inputs[2], 1)) continue;
    for (const char* a : {"lo", "hi", "hard_swish", "scale", "shift"}) {
      const Attribute* at = pw.find(std::string("minnow_") + a);
      if (!at) continue;
      Attribute copy = *at;
      copy.name = std::string("minnow_pw_") + a;
      dw.attrs.push_back(copy);
    }
    dw.inputs = {pw.inputs[0], packed_filters(g, pw), bias1 ? pw.inputs[2] : -1, dw.inputs[1], bias_d ? dw.inputs[2] : -1};
    dw.op_type = "MinnowPointwiseDepthwise";
    pw.op_type = "";
    ++fused;
  }
  drop_cleared(g);
  return fused;
}

// The other 1 x 1 convolutions -> MinnowPointwise with their filters packed once here
// instead of on every run (ops/nn_ops.cpp).
int pack_pointwise(Graph& g) {
  int packed = 0;
  for (Node& n : g.nodes) {
    if (!plain_pointwise(g, n)) continue;
    set_attr(n, "minnow_filters", 0.0f, g.constants.at(n.inputs[1])->shape()[0], true);
    n.inputs[1] = packed_filters(g, n);
    n.op_type = "MinnowPointwise";
    ++packed;
  }
  return packed;
}

}  // namespace

OptimizeStats optimize_graph(Graph& g, int64_t opset) {
  OptimizeStats s;
  s.folded = fold_constants(g, opset);
  s.fused_batch_norms = fuse_batch_norms(g);
  s.fused_activations = fuse_hard_swish(g) + fuse_into_convs(g);
  s.fused_convs = fuse_pointwise_depthwise(g);
  s.packed_convs = pack_pointwise(g);
  s.removed = remove_dead(g);
  return s;
}

}  // namespace minnow::onnx
