// Interpreter (a parsed, checked graph) and Session (an optimized copy bound to input
// shapes, with a value table whose buffers are kept between runs). Intermediate tensors
// share a pool of buffers: a tensor takes the buffer freed last (still in cache) before
// its node runs and gives it back after its last reader, so the live set, not the whole
// graph, stays in memory (MobileNetV2: every layer wrote to memory no cache held).
#include <chrono>

#include "base/error.hpp"
#include "base/mapped_file.hpp"
#include "base/thread_pool.hpp"
#include "minnow/onnx.hpp"
#include "onnx/graph.hpp"
#include "onnx/ops/op.hpp"
#include "onnx/optimize.hpp"

namespace minnow::onnx {

struct Session::Impl {
  Graph g;
  std::vector<Tensor> values;            // by value id (constants excepted)
  std::vector<const Tensor*> readable;   // by value id: the constant or &values[id]
  std::vector<std::vector<const Tensor*>> node_in;
  std::vector<std::vector<Tensor*>> node_out;
  std::vector<std::vector<Tensor*>> node_takes;     // by node: its outputs that take a pooled buffer
  std::vector<std::vector<Tensor*>> node_releases;  // by node: tensors it is the last reader of
  std::vector<Tensor> spare;                        // the pool: buffers of tensors no longer needed
  std::unique_ptr<ThreadPool> pool;
  OpContext ctx;
  bool profile = false;
  std::vector<NodeTime> times;
  int runs = 0;
};

namespace {

// Which outputs take a pooled buffer and where each gives it back: every node output that
// is neither a graph output nor a graph input, freed after its last reader (or at once
// when nothing reads it).
void plan_buffers(Session::Impl& s) {
  const Graph& g = s.g;
  std::vector<char> kept(g.names.size(), 0);
  for (int id : g.output_ids) kept[static_cast<size_t>(id)] = 1;
  for (int id : g.input_ids) kept[static_cast<size_t>(id)] = 1;
  std::vector<int64_t> last(g.names.size(), -1);
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (int id : g.nodes[i].inputs)
      if (id >= 0) last[static_cast<size_t>(id)] = static_cast<int64_t>(i);
  s.node_takes.assign(g.nodes.size(), {});
  s.node_releases.assign(g.nodes.size(), {});
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (int id : g.nodes[i].outputs) {
      if (id < 0 || kept[static_cast<size_t>(id)] || g.constants.count(id)) continue;
      Tensor* t = &s.values[static_cast<size_t>(id)];
      s.node_takes[i].push_back(t);
      const int64_t end = std::max(last[static_cast<size_t>(id)], static_cast<int64_t>(i));
      s.node_releases[static_cast<size_t>(end)].push_back(t);
    }
}

}  // namespace

Interpreter::Interpreter(std::shared_ptr<const Graph> graph) : graph_(std::move(graph)) {}
Interpreter::~Interpreter() = default;

std::unique_ptr<Interpreter> Interpreter::load(const std::string& path) {
  MappedFile file(path);
  return from_bytes(file.bytes());
}

std::unique_ptr<Interpreter> Interpreter::from_bytes(std::span<const uint8_t> model) {
  auto graph = std::make_shared<Graph>(parse_model(model));
  for (const Node& n : graph->nodes)
    if (!find_op(n.op_type)) n.fail("operator " + n.op_type + " is not supported by minnow");
  return std::unique_ptr<Interpreter>(new Interpreter(std::move(graph)));
}

const std::vector<IoInfo>& Interpreter::inputs() const { return graph_->inputs; }
const std::vector<IoInfo>& Interpreter::outputs() const { return graph_->outputs; }
int64_t Interpreter::opset() const { return graph_->opset; }
size_t Interpreter::node_count() const { return graph_->nodes.size(); }
std::string Interpreter::metadata(const std::string& key) const {
  for (auto& [k, v] : graph_->metadata)
    if (k == key) return v;
  return "";
}

std::unique_ptr<Session> Interpreter::create_session(const std::map<std::string, std::vector<int64_t>>& input_shapes,
                                                     const SessionOptions& options) const {
  auto impl = std::make_unique<Session::Impl>();
  impl->g = *graph_;
  Graph& g = impl->g;
  for (auto& [name, shape] : input_shapes) {
    bool found = false;
    for (auto& in : g.inputs) found = found || in.name == name;
    if (!found) throw Error("onnx: the model has no input named '" + name + "'");
  }
  impl->values.resize(g.names.size());
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    const IoInfo& in = g.inputs[i];
    std::vector<int64_t> shape = in.shape;
    if (auto it = input_shapes.find(in.name); it != input_shapes.end()) {
      if (!shape.empty() && it->second.size() != shape.size())
        throw Error("onnx: input '" + in.name + "' has rank " + std::to_string(shape.size()) + ", not " +
                    std::to_string(it->second.size()));
      for (size_t d = 0; d < shape.size(); ++d)
        if (shape[d] >= 0 && shape[d] != it->second[d])
          throw Error("onnx: input '" + in.name + "' has dimension " + std::to_string(d) + " fixed at " +
                      std::to_string(shape[d]));
      shape = it->second;
    }
    for (int64_t d : shape)
      if (d < 0) throw Error("onnx: input '" + in.name + "' has a symbolic dimension: give its shape");
    impl->values[g.input_ids[i]] = Tensor(in.dtype, shape);
  }
  impl->ctx.opset = g.opset;
  if (options.optimize) optimize_graph(g, g.opset);
  impl->values.resize(g.names.size());
  impl->readable.resize(g.names.size());
  for (size_t id = 0; id < g.names.size(); ++id) {
    auto c = g.constants.find(static_cast<int>(id));
    impl->readable[id] = c != g.constants.end() ? c->second.get() : &impl->values[id];
  }
  for (auto& n : g.nodes) {
    std::vector<const Tensor*> in;
    for (int id : n.inputs) in.push_back(id < 0 ? nullptr : impl->readable[id]);
    std::vector<Tensor*> out;
    for (int id : n.outputs) out.push_back(id < 0 ? nullptr : &impl->values[id]);
    impl->node_in.push_back(std::move(in));
    impl->node_out.push_back(std::move(out));
    impl->times.push_back({n.name, n.op_type, 0, ""});
  }
  plan_buffers(*impl);
  impl->pool = std::make_unique<ThreadPool>(options.n_threads);
  impl->ctx.pool = impl->pool.get();
  impl->profile = options.profile;
  return std::make_unique<Session>(std::move(impl));
}

Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Session::~Session() = default;

Tensor& Session::input(const std::string& name) {
  for (size_t i = 0; i < impl_->g.inputs.size(); ++i)
    if (impl_->g.inputs[i].name == name) return impl_->values[impl_->g.input_ids[i]];
  throw Error("onnx: the model has no input named '" + name + "'");
}

void Session::run() {
  Impl& s = *impl_;
  for (size_t i = 0; i < s.g.inputs.size(); ++i)
    if (s.values[s.g.input_ids[i]].dtype() != s.g.inputs[i].dtype)
      throw Error("onnx: input '" + s.g.inputs[i].name + "' must be " + dtype_name(s.g.inputs[i].dtype));
  for (size_t i = 0; i < s.g.nodes.size(); ++i) {
    const Node& n = s.g.nodes[i];
    auto t0 = std::chrono::steady_clock::now();
    for (Tensor* t : s.node_takes[i])
      if (!s.spare.empty()) {
        t->swap_buffer(s.spare.back());
        s.spare.pop_back();
      }
    find_op(n.op_type)(n, s.node_in[i], s.node_out[i], s.ctx);
    if (s.profile) {
      s.times[i].ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      if (!s.node_out[i].empty() && s.node_out[i][0]) s.times[i].output_shape = s.node_out[i][0]->shape_string();
    }
    for (Tensor* t : s.node_releases[i]) s.spare.emplace_back().swap_buffer(*t);
  }
  ++s.runs;
}

const Tensor& Session::output(const std::string& name) const {
  for (size_t i = 0; i < impl_->g.outputs.size(); ++i)
    if (impl_->g.outputs[i].name == name) return *impl_->readable[impl_->g.output_ids[i]];
  throw Error("onnx: the model has no output named '" + name + "'");
}

std::vector<std::string> Session::input_names() const {
  std::vector<std::string> v;
  for (auto& in : impl_->g.inputs) v.push_back(in.name);
  return v;
}

std::vector<std::string> Session::output_names() const {
  std::vector<std::string> v;
  for (auto& out : impl_->g.outputs) v.push_back(out.name);
  return v;
}

size_t Session::node_count() const { return impl_->g.nodes.size(); }
const std::vector<NodeTime>& Session::profile() const { return impl_->times; }
int Session::runs() const { return impl_->runs; }

}  // namespace minnow::onnx
