#include <algorithm>
#include <map>
#include <string>

#include "base/error.hpp"
#include "onnx/ops/op.hpp"

namespace minnow::onnx {

namespace {
std::map<std::string, OpFn, std::less<>>& table() {
  static std::map<std::string, OpFn, std::less<>> ops = [] {
    static std::map<std::string, OpFn, std::less<>>* building = nullptr;
    std::map<std::string, OpFn, std::less<>> m;
    building = &m;
    OpRegistrar r{[](std::string_view name, OpFn fn) { (*building)[std::string(name)] = fn; }};
    register_elementwise_ops(r);
    register_shape_ops(r);
    register_nn_ops(r);
    register_reduce_ops(r);
    building = nullptr;
    return m;
  }();
  return ops;
}
}  // namespace

OpFn find_op(std::string_view op_type) {
  auto& t = table();
  auto it = t.find(op_type);
  return it == t.end() ? nullptr : it->second;
}

std::vector<std::string_view> supported_ops() {
  std::vector<std::string_view> v;
  for (auto& [name, fn] : table()) v.push_back(name);
  return v;
}

const Tensor& need(const Node& n, std::span<const Tensor* const> in, size_t i) {
  if (i >= in.size() || !in[i]) n.fail("input " + std::to_string(i) + " is missing");
  return *in[i];
}

int64_t normalize_axis(const Node& n, int64_t axis, int rank) {
  if (axis < -rank || axis >= std::max(rank, 1)) n.fail("axis " + std::to_string(axis) + " out of range for rank " + std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

std::vector<int64_t> read_ints(const Node& n, const Tensor& t) {
  std::vector<int64_t> v(t.size());
  if (t.dtype() == DataType::Int64) std::copy(t.data<int64_t>(), t.data<int64_t>() + t.size(), v.begin());
  else if (t.dtype() == DataType::Int32) std::copy(t.data<int32_t>(), t.data<int32_t>() + t.size(), v.begin());
  else n.fail(std::string("expects an integer tensor, got ") + dtype_name(t.dtype()));
  return v;
}

std::vector<int64_t> strides_of(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size());
  int64_t acc = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    s[i] = acc;
    acc *= shape[i];
  }
  return s;
}

}  // namespace minnow::onnx
