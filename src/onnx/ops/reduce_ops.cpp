// Reductions over axes (ReduceSum / Mean / Max / Min / Prod / SumSquare / L1 / L2 /
// LogSumExp) and ArgMax / ArgMin.
#include <algorithm>
#include <cmath>
#include <limits>

#include "base/error.hpp"
#include "onnx/ops/op.hpp"

namespace minnow::onnx {

namespace {

using In = std::span<const Tensor* const>;
using Out = std::span<Tensor* const>;

enum class Reduce { Sum, Mean, Max, Min, Prod, SumSquare, L1, L2, LogSumExp };

template <Reduce kOp>
void run_reduce(const Node& n, In in, Out out, OpContext&) {
  const Tensor& x = need(n, in, 0);
  const int r = x.rank();
  std::vector<int64_t> axes = (in.size() > 1 && in[1]) ? read_ints(n, *in[1]) : n.get_ints("axes");
  const bool keep = n.get_int("keepdims", 1) != 0;
  std::vector<bool> reduce(r, axes.empty());
  if (axes.empty() && n.get_int("noop_with_empty_axes", 0)) {
    *out[0] = x;
    return;
  }
  for (int64_t a : axes) reduce[normalize_axis(n, a, r)] = true;
  std::vector<int64_t> shape, kept_shape;
  for (int d = 0; d < r; ++d) {
    if (!reduce[d]) shape.push_back(x.shape()[d]);
    else if (keep) shape.push_back(1);
    kept_shape.push_back(reduce[d] ? 1 : x.shape()[d]);
  }
  auto body = [&](auto tag) {
    using T = decltype(tag);
    int64_t out_n = 1;
    for (int64_t d : kept_shape) out_n *= d;
    std::vector<double> acc(out_n, kOp == Reduce::Prod ? 1.0
                                  : kOp == Reduce::Max ? -std::numeric_limits<double>::infinity()
                                  : kOp == Reduce::Min ? std::numeric_limits<double>::infinity() : 0.0);
    std::vector<double> shift;
    auto os = strides_of(kept_shape);
    std::vector<int64_t> idx(r, 0);
    const T* px = x.data<T>();
    auto target = [&]() {
      int64_t o = 0;
      for (int d = 0; d < r; ++d) o += (reduce[d] ? 0 : idx[d]) * os[d];
      return o;
    };
    // Runs along the last axis: one target when it is reduced, consecutive ones when kept.
    const int64_t run = r ? x.shape()[r - 1] : 1, inc = r && !reduce[r - 1] ? 1 : 0;
    auto walk = [&](auto&& f) {
      std::fill(idx.begin(), idx.end(), 0);
      for (int64_t i = 0; i < x.size(); i += run) {
        const int64_t o = target();
        for (int64_t j = 0; j < run; ++j) f(o + j * inc, static_cast<double>(px[i + j]));
        for (int d = r - 2; d >= 0; --d) {
          if (++idx[d] < x.shape()[d]) break;
          idx[d] = 0;
        }
      }
    };
    if constexpr (kOp == Reduce::LogSumExp) {
      shift.assign(out_n, -std::numeric_limits<double>::infinity());
      walk([&](int64_t o, double v) { shift[o] = std::max(shift[o], v); });
    }
    walk([&](int64_t o, double v) {
      switch (kOp) {
        case Reduce::Sum: case Reduce::Mean: acc[o] += v; break;
        case Reduce::Max: acc[o] = std::max(acc[o], v); break;
        case Reduce::Min: acc[o] = std::min(acc[o], v); break;
        case Reduce::Prod: acc[o] *= v; break;
        case Reduce::SumSquare: case Reduce::L2: acc[o] += v * v; break;
        case Reduce::L1: acc[o] += std::abs(v); break;
        case Reduce::LogSumExp: acc[o] += std::exp(v - shift[o]); break;
      }
    });
    const int64_t count = out_n ? x.size() / out_n : 0;
    Tensor& y = *out[0];
    y.resize(x.dtype(), shape);
    for (int64_t o = 0; o < out_n; ++o) {
      double v = acc[o];
      if (kOp == Reduce::Mean) v = count ? v / static_cast<double>(count) : std::nan("");
      if (kOp == Reduce::L2) v = std::sqrt(v);
      if (kOp == Reduce::LogSumExp) v = std::log(v) + shift[o];
      y.data<T>()[o] = static_cast<T>(v);
    }
  };
  numeric_type(n, x.dtype(), body);
}

template <bool kMax>
void run_arg(const Node& n, In in, Out out, OpContext&) {
  const Tensor& x = need(n, in, 0);
  const int r = x.rank();
  if (r == 0) n.fail("scalar input");
  const int64_t axis = normalize_axis(n, n.get_int("axis", 0), r);
  const bool keep = n.get_int("keepdims", 1) != 0, last = n.get_int("select_last_index", 0) != 0;
  int64_t outer = 1, len = x.shape()[axis], inner = 1;
  for (int d = 0; d < axis; ++d) outer *= x.shape()[d];
  for (int d = axis + 1; d < r; ++d) inner *= x.shape()[d];
  if (len == 0) n.fail("empty axis");
  std::vector<int64_t> shape;
  for (int d = 0; d < r; ++d)
    if (d != axis) shape.push_back(x.shape()[d]);
    else if (keep) shape.push_back(1);
  Tensor& y = *out[0];
  y.resize(DataType::Int64, shape);
  auto body = [&](auto tag) {
    using T = decltype(tag);
    const T* px = x.data<T>();
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        int64_t best = 0;
        T bv = px[o * len * inner + i];
        for (int64_t j = 1; j < len; ++j) {
          T v = px[(o * len + j) * inner + i];
          bool better = kMax ? (last ? v >= bv : v > bv) : (last ? v <= bv : v < bv);
          if (better) { bv = v; best = j; }
        }
        y.data<int64_t>()[o * inner + i] = best;
      }
  };
  numeric_type(n, x.dtype(), body);
}

}  // namespace

void register_reduce_ops(const OpRegistrar& r) {
  r.add("ReduceSum", run_reduce<Reduce::Sum>);
  r.add("ReduceMean", run_reduce<Reduce::Mean>);
  r.add("ReduceMax", run_reduce<Reduce::Max>);
  r.add("ReduceMin", run_reduce<Reduce::Min>);
  r.add("ReduceProd", run_reduce<Reduce::Prod>);
  r.add("ReduceSumSquare", run_reduce<Reduce::SumSquare>);
  r.add("ReduceL1", run_reduce<Reduce::L1>);
  r.add("ReduceL2", run_reduce<Reduce::L2>);
  r.add("ReduceLogSumExp", run_reduce<Reduce::LogSumExp>);
  r.add("ArgMax", run_arg<true>);
  r.add("ArgMin", run_arg<false>);
}

}  // namespace minnow::onnx
