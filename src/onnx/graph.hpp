// minnow's graph IR for ONNX models: values are interned names (ints), nodes refer to
// them, constants (initializers and Constant nodes) hold their tensors.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "minnow/onnx.hpp"

namespace minnow::onnx {

struct Attribute {
  enum class Kind { Float, Int, String, Tensor, Floats, Ints, Strings, Other } kind = Kind::Other;
  std::string name;
  float f = 0;
  int64_t i = 0;
  std::string s;
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
  std::shared_ptr<onnx::Tensor> t;
};

struct Node {
  std::string name, op_type, domain;
  std::vector<int> inputs;  // value ids; -1 for an omitted optional input
  std::vector<int> outputs;
  std::vector<Attribute> attrs;

  const Attribute* find(std::string_view attr) const;
  int64_t get_int(std::string_view attr, int64_t fallback) const;
  float get_float(std::string_view attr, float fallback) const;
  std::string get_string(std::string_view attr, std::string fallback) const;
  std::vector<int64_t> get_ints(std::string_view attr, std::vector<int64_t> fallback = {}) const;
  std::vector<float> get_floats(std::string_view attr) const;
  [[noreturn]] void fail(const std::string& why) const;  // "onnx: node 'name' (Op): why"
};

class Graph {
 public:
  int64_t opset = 0;  // of the default ("" / "ai.onnx") domain
  std::vector<std::string> names;  // value id -> name
  std::vector<IoInfo> inputs, outputs;
  std::vector<int> input_ids, output_ids;
  std::unordered_map<int, std::shared_ptr<const onnx::Tensor>> constants;
  std::vector<Node> nodes;  // in topological order after parse_model
  std::vector<std::pair<std::string, std::string>> metadata;  // the model's metadata_props

  int intern(const std::string& name);
  int find(const std::string& name) const;  // -1 when absent

 private:
  std::unordered_map<std::string, int> ids_;
};

// Parses a serialized ModelProto: the graph, its initializers and Constant nodes, sorted
// topologically; throws on malformed data, cycles and undefined inputs (operators are
// checked by Interpreter::from_bytes).
Graph parse_model(std::span<const uint8_t> bytes);
// Parses a serialized TensorProto (initializers, the backend tests' .pb files).
onnx::Tensor parse_tensor(std::span<const uint8_t> bytes, std::string* name = nullptr);

}  // namespace minnow::onnx
