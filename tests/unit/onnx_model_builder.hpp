// Builds ONNX models in tests: a minimal protobuf writer and the messages of onnx.proto
// the tests use (field numbers from the ONNX specification).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace minnow::test {

// A minimal protobuf writer for building test models.
struct Msg {
  std::string b;
  Msg& varint(uint64_t v) {
    while (v >= 0x80) { b += static_cast<char>((v & 0x7f) | 0x80); v >>= 7; }
    b += static_cast<char>(v);
    return *this;
  }
  Msg& key(int field, int wire) { return varint(static_cast<uint64_t>(field) << 3 | wire); }
  Msg& i(int field, int64_t v) { return key(field, 0).varint(static_cast<uint64_t>(v)); }
  Msg& s(int field, const std::string& v) { key(field, 2).varint(v.size()); b += v; return *this; }
  Msg& m(int field, const Msg& v) { return s(field, v.b); }
};

inline Msg tensor_type(int elem, std::vector<int64_t> dims) {
  Msg shape;
  for (int64_t d : dims) shape.m(1, Msg().i(1, d));
  return Msg().m(1, Msg().i(1, elem).m(2, shape));
}
inline Msg value_info(const std::string& name, std::vector<int64_t> dims) { return Msg().s(1, name).m(2, tensor_type(1, dims)); }
inline Msg node(const std::string& op, std::vector<std::string> in, std::vector<std::string> out) {
  Msg n;
  for (auto& x : in) n.s(1, x);
  for (auto& x : out) n.s(2, x);
  return n.s(3, out.empty() ? op : out[0]).s(4, op);
}
inline Msg float_tensor(const std::string& name, std::vector<int64_t> dims, std::vector<float> values) {
  Msg t;
  for (int64_t d : dims) t.i(1, d);
  t.i(2, 1).s(8, name);
  std::string raw(reinterpret_cast<const char*>(values.data()), values.size() * 4);
  return t.s(9, raw);
}
inline std::vector<uint8_t> model(const Msg& graph, int opset = 13) {
  Msg m;
  m.i(1, 8).m(8, Msg().s(1, "").i(2, opset)).m(7, graph);
  return {m.b.begin(), m.b.end()};
}

}  // namespace minnow::test
