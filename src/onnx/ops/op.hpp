// The operator interface of the ONNX runtime: one function per operator type that checks
// its inputs, sizes its outputs (Tensor::resize keeps buffers between runs) and computes.
#pragma once
#include <algorithm>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "base/thread_pool.hpp"
#include "onnx/graph.hpp"

namespace minnow::onnx {

struct OpContext {
  ThreadPool* pool = nullptr;
  int64_t opset = 0;
  std::vector<float> scratch;  // an operator's working memory, kept between nodes and runs
  std::vector<std::vector<float>> thread_scratch;  // one per pool thread, likewise
  // thread_scratch with a buffer for every pool thread, made before tasks index it.
  std::vector<std::vector<float>>& per_thread_scratch() {
    const size_t n = pool ? static_cast<size_t>(pool->size()) : 1;
    if (thread_scratch.size() < n) thread_scratch.resize(n);
    return thread_scratch;
  }
};

// fn(begin, end) over [0, n) in contiguous chunks, a few per thread: neighbouring items
// (whose outputs share cache lines) stay on one thread.
template <class F>
void parallel_chunks(OpContext& ctx, int64_t n, F&& fn) {
  const int64_t chunks = ctx.pool ? std::min<int64_t>(n, 4 * ctx.pool->size()) : 1;
  if (chunks <= 1) {
    if (n > 0) fn(int64_t{0}, n);
    return;
  }
  ctx.pool->parallel_for(chunks, [&](int64_t t, int) { fn(n * t / chunks, n * (t + 1) / chunks); });
}

// in[i] is nullptr for an omitted optional input; out[i] for an omitted output.
using OpFn = void (*)(const Node& node, std::span<const Tensor* const> in, std::span<Tensor* const> out, OpContext& ctx);

OpFn find_op(std::string_view op_type);  // nullptr when minnow lacks it
std::vector<std::string_view> supported_ops();  // sorted

// Each ops/*.cpp file adds its operators.
struct OpRegistrar {
  void (*add)(std::string_view name, OpFn fn);
};
void register_elementwise_ops(const OpRegistrar& r);
void register_shape_ops(const OpRegistrar& r);
void register_nn_ops(const OpRegistrar& r);
void register_reduce_ops(const OpRegistrar& r);

// Helpers shared by the operator files.
const Tensor& need(const Node& n, std::span<const Tensor* const> in, size_t i);  // a required input
int64_t normalize_axis(const Node& n, int64_t axis, int rank);  // -rank..rank-1 -> 0..rank-1
std::vector<int64_t> read_ints(const Node& n, const Tensor& t);  // an int32/int64 tensor's values
std::vector<int64_t> strides_of(const std::vector<int64_t>& shape);
// A 1 x 1 convolution's filters (m x k) laid out for kernels::pointwise8 / pointwise16 at dst:
// groups of 8 filters, each k x 8 (filters past m zero): ceil(m / 8) x k x 8 floats.
void pack_filters8(const float* w, int64_t m, int64_t k, float* dst);

// Calls f(T{}) with T the C++ type of a numeric element type (every DataType but Bool).
template <class F>
void numeric_type(const Node& n, DataType t, F&& f) {
  switch (t) {
    case DataType::Float: f(float{}); break;
    case DataType::Double: f(double{}); break;
    case DataType::Int32: f(int32_t{}); break;
    case DataType::Int64: f(int64_t{}); break;
    case DataType::UInt8: f(uint8_t{}); break;
    case DataType::Int8: f(int8_t{}); break;
    default: n.fail(std::string("element type ") + dtype_name(t) + " is not supported");
  }
}

}  // namespace minnow::onnx
