// ModelProto -> Graph. Field numbers are those of onnx.proto (ONNX IR version 3 and later).
#include <algorithm>
#include <cstring>

#include "base/error.hpp"
#include "onnx/graph.hpp"
#include "onnx/proto_reader.hpp"

namespace minnow::onnx {

namespace {

constexpr int kMaxRank = 16;

DataType element_type(int64_t onnx_type) {
  switch (onnx_type) {
    case 1: return DataType::Float;
    case 2: return DataType::UInt8;
    case 3: return DataType::Int8;
    case 6: return DataType::Int32;
    case 7: return DataType::Int64;
    case 9: return DataType::Bool;
    case 11: return DataType::Double;
    default: return DataType::Undefined;
  }
}

const char* onnx_type_name(int64_t t) {
  static const char* names[] = {"undefined", "float", "uint8", "int8", "uint16", "int16", "int32", "int64", "string",
                                "bool", "float16", "double", "uint32", "uint64", "complex64", "complex128", "bfloat16"};
  return t >= 0 && t <= 16 ? names[t] : "an unknown type";
}

// TypeProto -> dtype and dims (-1 for symbolic); false for non-tensor types.
bool parse_type(std::span<const uint8_t> bytes, IoInfo& info) {
  ProtoReader r(bytes, "value type");
  bool tensor = false;
  while (r.next()) {
    if (r.field() != 1) { r.skip(); continue; }  // 1: tensor_type
    tensor = true;
    ProtoReader t(r.bytes(), "tensor type");
    while (t.next()) {
      if (t.field() == 1) {
        int64_t et = t.int64();
        info.dtype = element_type(et);
        if (info.dtype == DataType::Undefined)
          t.fail(std::string("'") + info.name + "' has element type " + onnx_type_name(et) + ", which minnow does not support");
      } else if (t.field() == 2) {  // shape
        ProtoReader s(t.bytes(), "tensor shape");
        while (s.next()) {
          if (s.field() != 1) { s.skip(); continue; }
          ProtoReader d(s.bytes(), "dimension");
          int64_t v = -1;
          while (d.next()) {
            if (d.field() == 1) {
              v = std::max<int64_t>(d.int64(), -1);  // some exporters write -1 for "any"
            } else {
              d.skip();
            }
          }
          info.shape.push_back(v);
          if (info.shape.size() > kMaxRank) s.fail("rank above 16");
        }
      } else {
        t.skip();
      }
    }
  }
  return tensor;
}

IoInfo parse_value_info(std::span<const uint8_t> bytes) {
  ProtoReader r(bytes, "value info");
  IoInfo info;
  std::span<const uint8_t> type;
  while (r.next()) {
    if (r.field() == 1) info.name = r.string();
    else if (r.field() == 2) type = r.bytes();
    else r.skip();
  }
  if (!type.empty() && !parse_type(type, info)) r.fail("'" + info.name + "' is not a tensor");
  return info;
}

Attribute parse_attribute(std::span<const uint8_t> bytes) {
  ProtoReader r(bytes, "attribute");
  Attribute a;
  int64_t type = 0;
  while (r.next()) {
    switch (r.field()) {
      case 1: a.name = r.string(); break;
      case 20: type = r.int64(); break;
      case 2: a.f = r.f32(); break;
      case 3: a.i = r.int64(); break;
      case 4: a.s = r.string(); break;
      case 5: a.t = std::make_shared<onnx::Tensor>(parse_tensor(r.bytes())); break;
      case 7: r.append_floats(a.floats); break;
      case 8: r.append_ints(a.ints); break;
      case 9: a.strings.push_back(r.string()); break;
      default: r.skip();
    }
  }
  using K = Attribute::Kind;
  switch (type) {
    case 1: a.kind = K::Float; break;
    case 2: a.kind = K::Int; break;
    case 3: a.kind = K::String; break;
    case 4: a.kind = K::Tensor; if (!a.t) r.fail("tensor attribute '" + a.name + "' without a tensor"); break;
    case 6: a.kind = K::Floats; break;
    case 7: a.kind = K::Ints; break;
    case 8: a.kind = K::Strings; break;
    default: a.kind = K::Other;
  }
  return a;
}

struct RawNode {
  Node node;
  std::vector<std::string> inputs, outputs;
};

RawNode parse_node(std::span<const uint8_t> bytes) {
  ProtoReader r(bytes, "node");
  RawNode n;
  while (r.next()) {
    switch (r.field()) {
      case 1: n.inputs.push_back(r.string()); break;
      case 2: n.outputs.push_back(r.string()); break;
      case 3: n.node.name = r.string(); break;
      case 4: n.node.op_type = r.string(); break;
      case 5: n.node.attrs.push_back(parse_attribute(r.bytes())); break;
      case 7: n.node.domain = r.string(); break;
      default: r.skip();
    }
  }
  if (n.node.op_type.empty()) r.fail("node '" + n.node.name + "' without an op_type");
  return n;
}

// A Constant node's value as a tensor.
std::shared_ptr<const onnx::Tensor> constant_value(const Node& n) {
  if (n.attrs.size() != 1) n.fail("expects exactly one value attribute");
  const Attribute& a = n.attrs[0];
  auto vec = [](DataType t, std::vector<int64_t> shape) { return std::make_shared<onnx::Tensor>(t, std::move(shape)); };
  if (a.name == "value" && a.t) return a.t;
  if (a.name == "value_float") { auto t = vec(DataType::Float, {}); *t->data<float>() = a.f; return t; }
  if (a.name == "value_int") { auto t = vec(DataType::Int64, {}); *t->data<int64_t>() = a.i; return t; }
  if (a.name == "value_floats") {
    auto t = vec(DataType::Float, {static_cast<int64_t>(a.floats.size())});
    std::copy(a.floats.begin(), a.floats.end(), t->data<float>());
    return t;
  }
  if (a.name == "value_ints") {
    auto t = vec(DataType::Int64, {static_cast<int64_t>(a.ints.size())});
    std::copy(a.ints.begin(), a.ints.end(), t->data<int64_t>());
    return t;
  }
  n.fail("value attribute '" + a.name + "' is not supported");
}

}  // namespace

const Attribute* Node::find(std::string_view attr) const {
  for (const auto& a : attrs)
    if (a.name == attr) return &a;
  return nullptr;
}
int64_t Node::get_int(std::string_view attr, int64_t fallback) const {
  const Attribute* a = find(attr);
  return a ? a->i : fallback;
}
float Node::get_float(std::string_view attr, float fallback) const {
  const Attribute* a = find(attr);
  return a ? a->f : fallback;
}
std::string Node::get_string(std::string_view attr, std::string fallback) const {
  const Attribute* a = find(attr);
  return a ? a->s : fallback;
}
std::vector<int64_t> Node::get_ints(std::string_view attr, std::vector<int64_t> fallback) const {
  const Attribute* a = find(attr);
  return a ? a->ints : fallback;
}
std::vector<float> Node::get_floats(std::string_view attr) const {
  const Attribute* a = find(attr);
  return a ? a->floats : std::vector<float>{};
}
void Node::fail(const std::string& why) const { throw Error("onnx: node '" + name + "' (" + op_type + "): " + why); }

int Graph::intern(const std::string& name) {
  auto [it, fresh] = ids_.try_emplace(name, static_cast<int>(names.size()));
  if (fresh) names.push_back(name);
  return it->second;
}
int Graph::find(const std::string& name) const {
  auto it = ids_.find(name);
  return it == ids_.end() ? -1 : it->second;
}

onnx::Tensor parse_tensor(std::span<const uint8_t> bytes, std::string* name) {
  ProtoReader r(bytes, "tensor");
  std::vector<int64_t> dims, int_data;
  std::vector<float> floats;
  std::vector<double> doubles;
  std::span<const uint8_t> raw;
  bool has_raw = false;
  int64_t type = 0;
  std::string tname;
  while (r.next()) {
    switch (r.field()) {
      case 1: r.append_ints(dims); break;
      case 2: type = r.int64(); break;
      case 4: r.append_floats(floats); break;
      case 5: case 7: case 11: r.append_ints(int_data); break;  // int32_data, int64_data, uint64_data
      case 8: tname = r.string(); break;
      case 9: raw = r.bytes(); has_raw = true; break;
      case 10: r.append_doubles(doubles); break;
      case 13: r.fail("'" + tname + "' keeps its data in an external file, which minnow does not read");
      case 14: if (r.int64() != 0) r.fail("'" + tname + "' keeps its data in an external file"); break;
      default: r.skip();
    }
  }
  if (name) *name = tname;
  DataType dt = element_type(type);
  if (dt == DataType::Undefined)
    r.fail("'" + tname + "' has element type " + onnx_type_name(type) + ", which minnow does not support");
  if (dims.size() > kMaxRank) r.fail("'" + tname + "' has rank above 16");
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) r.fail("'" + tname + "' has a negative dimension");
    if (d && n > (int64_t{1} << 32) / d) r.fail("'" + tname + "' has more than 2^32 elements");
    n *= d;
  }
  size_t es = dtype_size(dt);
  auto count = [&](size_t have) {
    if (have != static_cast<size_t>(n))
      r.fail("'" + tname + "' holds " + std::to_string(have) + " values, its shape needs " + std::to_string(n));
  };
  // Sizes are checked before anything is allocated.
  if (has_raw) {
    if (raw.size() != static_cast<size_t>(n) * es)
      r.fail("'" + tname + "' raw data holds " + std::to_string(raw.size()) + " bytes, its shape needs " +
             std::to_string(n * static_cast<int64_t>(es)));
  } else {
    count(dt == DataType::Float ? floats.size() : dt == DataType::Double ? doubles.size() : int_data.size());
  }
  onnx::Tensor t(dt, dims);
  if (has_raw) {
    if (n) std::memcpy(t.raw(), raw.data(), raw.size());
    return t;
  }
  switch (dt) {
    case DataType::Float: count(floats.size()); std::copy(floats.begin(), floats.end(), t.data<float>()); break;
    case DataType::Double: count(doubles.size()); std::copy(doubles.begin(), doubles.end(), t.data<double>()); break;
    case DataType::Int64: count(int_data.size()); std::copy(int_data.begin(), int_data.end(), t.data<int64_t>()); break;
    case DataType::Int32:
      count(int_data.size());
      for (int64_t i = 0; i < n; ++i) t.data<int32_t>()[i] = static_cast<int32_t>(int_data[i]);
      break;
    case DataType::UInt8: case DataType::Int8: case DataType::Bool:
      count(int_data.size());
      for (int64_t i = 0; i < n; ++i) static_cast<uint8_t*>(t.raw())[i] = static_cast<uint8_t>(int_data[i]);
      break;
    default: break;
  }
  return t;
}

Graph parse_model(std::span<const uint8_t> bytes) {
  ProtoReader r(bytes, "model");
  std::span<const uint8_t> graph_bytes;
  Graph g;
  bool have_opset = false;
  while (r.next()) {
    if (r.field() == 7) {
      graph_bytes = r.bytes();
    } else if (r.field() == 8) {  // opset_import
      ProtoReader o(r.bytes(), "opset import");
      std::string domain;
      int64_t version = 0;
      while (o.next()) {
        if (o.field() == 1) domain = o.string();
        else if (o.field() == 2) version = o.int64();
        else o.skip();
      }
      if (domain.empty() || domain == "ai.onnx") { g.opset = version; have_opset = true; }
    } else if (r.field() == 14) {  // metadata_props
      ProtoReader e(r.bytes(), "metadata entry");
      std::string key, value;
      while (e.next()) {
        if (e.field() == 1) key = e.string();
        else if (e.field() == 2) value = e.string();
        else e.skip();
      }
      g.metadata.emplace_back(std::move(key), std::move(value));
    } else {
      r.skip();
    }
  }
  if (graph_bytes.empty()) r.fail("no graph (is this an ONNX model file?)");
  if (!have_opset) r.fail("no opset for the default domain");

  ProtoReader gr(graph_bytes, "graph");
  std::vector<RawNode> raw_nodes;
  std::vector<IoInfo> declared_inputs;
  while (gr.next()) {
    switch (gr.field()) {
      case 1: raw_nodes.push_back(parse_node(gr.bytes())); break;
      case 5: {
        std::string name;
        auto t = std::make_shared<onnx::Tensor>(parse_tensor(gr.bytes(), &name));
        g.constants[g.intern(name)] = std::move(t);
        break;
      }
      case 11: declared_inputs.push_back(parse_value_info(gr.bytes())); break;
      case 12: g.outputs.push_back(parse_value_info(gr.bytes())); break;
      case 15: gr.fail("sparse initializers are not supported");
      default: gr.skip();
    }
  }
  // Inputs that are also initializers are defaults, not inputs (IR version < 4 lists them).
  for (auto& in : declared_inputs) {
    int id = g.intern(in.name);
    if (g.constants.count(id)) continue;
    if (in.dtype == DataType::Undefined) gr.fail("input '" + in.name + "' has no tensor type");
    g.input_ids.push_back(id);
    g.inputs.push_back(std::move(in));
  }
  if (g.outputs.empty()) gr.fail("graph has no outputs");

  // Resolve names, check operators, then order the nodes (Kahn's algorithm).
  std::vector<int> producer;  // value id -> raw node index, -1 for graph inputs / constants
  auto set_producer = [&](int id, int node) {
    if (producer.size() <= static_cast<size_t>(id)) producer.resize(id + 1, -2);
    producer[id] = node;
  };
  for (int id : g.input_ids) set_producer(id, -1);
  for (auto& [id, t] : g.constants) set_producer(id, -1);
  for (size_t i = 0; i < raw_nodes.size(); ++i) {
    Node& n = raw_nodes[i].node;
    if (n.name.empty()) n.name = raw_nodes[i].outputs.empty() ? n.op_type : raw_nodes[i].outputs[0];
    if (!n.domain.empty() && n.domain != "ai.onnx")
      n.fail("operator domain '" + n.domain + "' is not supported");
    for (auto& out : raw_nodes[i].outputs) {
      int id = out.empty() ? -1 : g.intern(out);
      n.outputs.push_back(id);
      if (id < 0) continue;
      if (static_cast<size_t>(id) < producer.size() && producer[id] != -2) n.fail("output '" + out + "' is produced twice");
      set_producer(id, static_cast<int>(i));
    }
  }
  std::vector<int> pending(raw_nodes.size(), 0);
  std::vector<std::vector<int>> consumers(raw_nodes.size());
  for (size_t i = 0; i < raw_nodes.size(); ++i) {
    Node& n = raw_nodes[i].node;
    for (auto& in : raw_nodes[i].inputs) {
      if (in.empty()) { n.inputs.push_back(-1); continue; }
      int id = g.find(in);
      if (id < 0 || static_cast<size_t>(id) >= producer.size() || producer[id] == -2)
        n.fail("input '" + in + "' is neither a graph input, an initializer nor a node's output");
      n.inputs.push_back(id);
      if (producer[id] >= 0) {
        ++pending[i];
        consumers[producer[id]].push_back(static_cast<int>(i));
      }
    }
  }
  std::vector<int> ready;
  for (size_t i = 0; i < raw_nodes.size(); ++i)
    if (!pending[i]) ready.push_back(static_cast<int>(i));
  std::reverse(ready.begin(), ready.end());
  size_t processed = 0;
  while (!ready.empty()) {
    int i = ready.back();
    ready.pop_back();
    ++processed;
    Node& n = raw_nodes[i].node;
    if (n.op_type == "Constant") {
      if (n.outputs.size() != 1 || n.outputs[0] < 0) n.fail("expects one output");
      g.constants[n.outputs[0]] = constant_value(n);
    } else {
      g.nodes.push_back(std::move(n));
    }
    for (int c : consumers[i])
      if (--pending[c] == 0) ready.push_back(c);
  }
  if (processed != raw_nodes.size()) gr.fail("the graph has a cycle");
  for (auto& out : g.outputs) {
    int id = g.find(out.name);
    if (id < 0 || static_cast<size_t>(id) >= producer.size() || producer[id] == -2)
      gr.fail("output '" + out.name + "' is not produced by any node");
    g.output_ids.push_back(id);
  }
  return g;
}

}  // namespace minnow::onnx
