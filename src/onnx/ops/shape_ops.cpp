// Operators that move data without arithmetic: shapes, views, copies. They work on bytes,
// so every element type goes through one implementation.
#include <algorithm>
#include <cstring>
#include <cmath>
#include <numeric>

#include "base/error.hpp"
#include "onnx/ops/op.hpp"

namespace minnow::onnx {

namespace {

using In = std::span<const Tensor* const>;
using Out = std::span<Tensor* const>;

const uint8_t* bytes_of(const Tensor& t) { return static_cast<const uint8_t*>(t.raw()); }
uint8_t* bytes_of(Tensor& t) { return static_cast<uint8_t*>(t.raw()); }

// y = x's values under another shape, in y's own buffer.
void copy_with_shape(const Tensor& x, std::vector<int64_t> shape, Tensor& y) {
  y.resize(x.dtype(), std::move(shape));
  if (x.bytes()) std::memcpy(y.raw(), x.raw(), x.bytes());
}

int64_t product(const std::vector<int64_t>& s, size_t from = 0, size_t to = SIZE_MAX) {
  int64_t p = 1;
  for (size_t i = from; i < std::min(to, s.size()); ++i) p *= s[i];
  return p;
}

void run_reshape(const Node& n, In in, Out out, OpContext&) {
  const Tensor& x = need(n, in, 0);
  std::vector<int64_t> shape = read_ints(n, need(n, in, 1));
  bool allow_zero = n.get_int("allowzero", 0) != 0;
  int infer = -1;
  int64_t known = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0 && !allow_zero) {
      if (i >= x.shape().size()) n.fail("a 0 in the shape refers to a dimension the input lacks");
      shape[i] = x.shape()[i];
    }
    if (shape[i] == -1) {
      if (infer >= 0) n.fail("more than one -1 in the shape");
      infer = static_cast<int>(i);
    } else if (shape[i] < 0) {
      n.fail("negative dimension " + std::to_string(shape[i]) + " in the shape");
    } else {
      known *= shape[i];
    }
  }
  if (infer >= 0) {
    if (known == 0 || x.size() % known) n.fail("cannot infer the -1 dimension for " + x.shape_string());
    shape[infer] = x.size() / known;
  }
  if (product(shape) != x.size()) n.fail("cannot reshape " + x.shape_string() + " to " + std::to_string(product(shape)) + " elements");
  copy_with_shape(x, shape, *out[0]);
}

void run_flatten(const Node& n, In in, Out out, OpContext&) {
  const Tensor& x = need(n, in, 0);
  int64_t axis = n.get_int("axis", 1);
  if (axis < 0) axis += x.rank();
  if (axis < 0 || axis > x.rank()) n.fail("axis out of range");
  copy_with_shape(x, {product(x.shape(), 0, axis), product(x.shape(), axis)}, *out[0]);
}

void run_shape(const Node& n, In in, Out out, OpContext&) {
  const Tensor& x = need(n, in, 0);
  int64_t r = x.rank();
  int64_t start = n.get_int("start", 0), end = n.get_int("end", r);
  if (start < 0) start += r;
  if (end < 0) end += r;
  start = std::clamp<int64_t>(start, 0, r);
  end = std::clamp<int64_t>(end, start, r);
  out[0]->resize(DataType::Int64, {end - start});
  for (int64_t i = start; i < end; ++i) out[0]->data<int64_t>()[i - start] = x.shape()[i];
}

void run_size(const Node& n, In in, Out out, OpContext&) {
  out[0]->resize(DataType::Int64, {});
  *out[0]->data<int64_t>() = need(n, in, 0).size();
}

// Axes from the attribute (older opsets) or the second input.
std::vector<int64_t> axes_of(const Node& n, In in, size_t input) {
  if (input < in.size() && in[input]) return read_ints(n, *in[input]);
  return n.get_ints("axes");
}

void run_squeeze(const Node& n, In in, Out out, OpContext&) {
  const Tensor& x = need(n, in, 0);
  std::vector<int64_t> axes = axes_of(n, in, 1);
  std::vector<bool> drop(x.rank(), false);
  if (axes.empty()) {
    for (int i = 0; i < x.rank(); ++i) drop[i] = x.shape()[i] == 1;
  }
  for (int64_t a : axes) {
    a = normalize_axis(n, a, x.rank());
    if (x.shape()[a] != 1) n.fail("cannot squeeze axis " + std::to_string(a) + " of size " + std::to_string(x.shape()[a]));
    drop[a] = true;
  }
  std::vector<int64_t> shape;
  for (int i = 0; i < x.rank(); ++i)
    if (!drop[i]) shape.push_back(x.shape()[i]);
  copy_with_shape(x, shape, *out[0]);
}

void run_unsqueeze(const Node& n, In in, Out out, OpContext&) {
  const Tensor& x = need(n, in, 0);
  std::vector<int64_t> axes = axes_of(n, in, 1);
  int rank = x.rank() + static_cast<int>(axes.size());
  std::vector<bool> ins(rank, false);
  for (int64_t a : axes) {
    a = normalize_axis(n, a, rank);
    if (ins[a]) n.fail("repeated axis");
    ins[a] = true;
  }
  std::vector<int64_t> shape;
  for (int i = 0, k = 0; i < rank; ++i) shape.push_back(ins[i] ? 1 : x.shape()[k++]);
  copy_with_shape(x, shape, *out[0]);
}

void run_transpose(const Node& n, In in, Out out, OpContext&) {
  const Tensor& x = need(n, in, 0);
  const int r = x.rank();
  std::vector<int64_t> perm = n.get_ints("perm");
  if (perm.empty()) {
    for (int i = r - 1; i >= 0; --i) perm.push_back(i);
  }
  if (static_cast<int>(perm.size()) != r) n.fail("perm has the wrong length");
  std::vector<bool> seen(r, false);
  for (int64_t p : perm) {
    if (p < 0 || p >= r || seen[p]) n.fail("perm is not a permutation");
    seen[p] = true;
  }
  std::vector<int64_t> shape(r);
  for (int i = 0; i < r; ++i) shape[i] = x.shape()[perm[i]];
  Tensor& y = *out[0];
  y.resize(x.dtype(), shape);
  const size_t es = dtype_size(x.dtype());
  auto in_strides = strides_of(x.shape());
  std::vector<int64_t> step(r);  // input stride of each output dimension
  for (int i = 0; i < r; ++i) step[i] = in_strides[perm[i]];
  const uint8_t* src = bytes_of(x);
  uint8_t* dst = bytes_of(y);
  std::vector<int64_t> idx(r, 0);
  int64_t off = 0;
  const int64_t inner = r ? shape[r - 1] : 1;
  const int64_t inner_step = r ? step[r - 1] : 0;
  for (int64_t done = 0; done < y.size(); done += inner) {
    if (es == 4) {
      for (int64_t i = 0; i < inner; ++i) std::memcpy(dst + i * 4, src + (off + i * inner_step) * 4, 4);
    } else {
      for (int64_t i = 0; i < inner; ++i) std::memcpy(dst + i * es, src + (off + i * inner_step) * es, es);
    }
    dst += inner * es;
    for (int d = r - 2; d >= 0; --d) {
      if (++idx[d] < shape[d]) { off += step[d]; break; }
      off -= step[d] * (shape[d] - 1);
      idx[d] = 0;
    }
  }
}

void run_concat(const Node& n, In in, Out out, OpContext&) {
  const Tensor& first = need(n, in, 0);
  const int r = first.rank();
  if (r == 0) n.fail("cannot concatenate scalars");
  int64_t axis = normalize_axis(n, n.get_int("axis", 0), r);
  std::vector<int64_t> shape = first.shape();
  shape[axis] = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    const Tensor& t = need(n, in, i);
    if (t.dtype() != first.dtype() || t.rank() != r) n.fail("inputs of different types or ranks");
    for (int d = 0; d < r; ++d)
      if (d != axis && t.shape()[d] != first.shape()[d]) n.fail("input shapes differ outside the axis");
    shape[axis] += t.shape()[axis];
  }
  Tensor& y = *out[0];
  y.resize(first.dtype(), shape);
  const size_t es = dtype_size(first.dtype());
  const int64_t outer = product(shape, 0, axis), inner = product(shape, axis + 1);
  uint8_t* dst = bytes_of(y);
  const int64_t row = shape[axis] * inner * es;
  int64_t at = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    const int64_t chunk = in[i]->shape()[axis] * inner * es;
    for (int64_t o = 0; o < outer; ++o) std::memcpy(dst + o * row + at, bytes_of(*in[i]) + o * chunk, chunk);
    at += chunk;
  }
}

void run_gather(const Node& n, In in, Out out, OpContext&) {
  const Tensor& x = need(n, in, 0);
  std::vector<int64_t> idx = read_ints(n, need(n, in, 1));
  if (x.rank() == 0) n.fail("cannot gather from a scalar");
  int64_t axis = normalize_axis(n, n.get_int("axis", 0), x.rank());
  const int64_t dim = x.shape()[axis];
  std::vector<int64_t> shape(x.shape().begin(), x.shape().begin() + axis);
  for (int64_t d : in[1]->shape()) shape.push_back(d);
  shape.insert(shape.end(), x.shape().begin() + axis + 1, x.shape().end());
  Tensor& y = *out[0];
  y.resize(x.dtype(), shape);
  const size_t es = dtype_size(x.dtype());
  const int64_t outer = product(x.shape(), 0, axis), inner = product(x.shape(), axis + 1) * es;
  uint8_t* dst = bytes_of(y);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t k : idx) {
      if (k < -dim || k >= dim) n.fail("index " + std::to_string(k) + " out of range for a dimension of " + std::to_string(dim));
      if (k < 0) k += dim;
      std::memcpy(dst, bytes_of(x) + (o * dim + k) * inner, inner);
      dst += inner;
    }
}

// Slice with starts/ends/axes/steps from inputs (opset >= 10) or attributes.
void run_slice(const Node& n, In in, Out out, OpContext& ctx) {
  const Tensor& x = need(n, in, 0);
  const int r = x.rank();
  std::vector<int64_t> starts, ends, axes, steps;
  if (ctx.opset < 10) {
    starts = n.get_ints("starts");
    ends = n.get_ints("ends");
    axes = n.get_ints("axes");
  } else {
    starts = read_ints(n, need(n, in, 1));
    ends = read_ints(n, need(n, in, 2));
    if (in.size() > 3 && in[3]) axes = read_ints(n, *in[3]);
    if (in.size() > 4 && in[4]) steps = read_ints(n, *in[4]);
  }
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    n.fail("starts, ends, axes and steps differ in length");
  std::vector<int64_t> begin(r, 0), step(r, 1), shape = x.shape();
  std::vector<bool> seen(r, false);
  for (size_t i = 0; i < starts.size(); ++i) {
    int64_t a = normalize_axis(n, axes[i], r);
    if (seen[a]) n.fail("repeated axis");
    seen[a] = true;
    int64_t dim = x.shape()[a], s = starts[i], e = ends[i], st = steps[i];
    if (st == 0) n.fail("step 0");
    if (s < 0) s += dim;
    if (e < 0) e += dim;
    if (st > 0) {
      s = std::clamp<int64_t>(s, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      shape[a] = e > s ? (e - s + st - 1) / st : 0;
    } else {
      s = std::clamp<int64_t>(s, 0, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
      shape[a] = s > e ? (s - e - st - 1) / -st : 0;
    }
    begin[a] = s;
    step[a] = st;
  }
  Tensor& y = *out[0];
  y.resize(x.dtype(), shape);
  const size_t es = dtype_size(x.dtype());
  auto strides = strides_of(x.shape());
  int64_t base = 0;
  for (int d = 0; d < r; ++d) base += begin[d] * strides[d];
  std::vector<int64_t> idx(r, 0);
  uint8_t* dst = bytes_of(y);
  // Runs along the last axis: one copy each when its step is 1.
  const int64_t run = r ? shape[r - 1] : 1, last_step = r ? step[r - 1] * strides[r - 1] : 1;
  for (int64_t i = 0; i < y.size(); i += run) {
    int64_t off = base;
    for (int d = 0; d < r; ++d) off += idx[d] * step[d] * strides[d];
    if (last_step == 1) std::memcpy(dst + i * es, bytes_of(x) + off * es, static_cast<size_t>(run) * es);
    else
      for (int64_t j = 0; j < run; ++j) std::memcpy(dst + (i + j) * es, bytes_of(x) + (off + j * last_step) * es, es);
    for (int d = r - 2; d >= 0; --d) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
}

void run_expand(const Node& n, In in, Out out, OpContext&) {
  const Tensor& x = need(n, in, 0);
  std::vector<int64_t> target = read_ints(n, need(n, in, 1));
  std::vector<std::vector<int64_t>> both{x.shape(), target};
  size_t rank = std::max(x.shape().size(), target.size());
  std::vector<int64_t> shape(rank, 1);
  for (auto& s : both)
    for (size_t k = 0; k < s.size(); ++k) {
      int64_t& o = shape[rank - s.size() + k];
      if (s[k] == o || s[k] == 1) continue;
      if (o == 1) o = s[k];
      else n.fail("shape cannot be expanded");
    }
  Tensor& y = *out[0];
  y.resize(x.dtype(), shape);
  const size_t es = dtype_size(x.dtype());
  auto ys = strides_of(shape);
  std::vector<int64_t> xs(rank, 0);
  {
    int64_t acc = 1;
    for (int d = static_cast<int>(rank) - 1, k = x.rank() - 1; k >= 0; --d, --k) {
      xs[d] = x.shape()[k] == 1 ? 0 : acc;
      acc *= x.shape()[k];
    }
  }
  for (int64_t i = 0; i < y.size(); ++i) {
    int64_t off = 0, rem = i;
    for (size_t d = 0; d < rank; ++d) {
      off += (rem / ys[d]) * xs[d];
      rem %= ys[d];
    }
    std::memcpy(bytes_of(y) + i * es, bytes_of(x) + off * es, es);
  }
}

void run_tile(const Node& n, In in, Out out, OpContext&) {
  const Tensor& x = need(n, in, 0);
  std::vector<int64_t> reps = read_ints(n, need(n, in, 1));
  if (static_cast<int>(reps.size()) != x.rank()) n.fail("repeats must have one value per dimension");
  std::vector<int64_t> shape = x.shape();
  for (int d = 0; d < x.rank(); ++d) {
    if (reps[d] < 0) n.fail("negative repeat");
    shape[d] *= reps[d];
  }
  Tensor& y = *out[0];
  y.resize(x.dtype(), shape);
  const size_t es = dtype_size(x.dtype());
  auto ys = strides_of(shape), xs = strides_of(x.shape());
  for (int64_t i = 0; i < y.size(); ++i) {
    int64_t off = 0, rem = i;
    for (int d = 0; d < x.rank(); ++d) {
      off += ((rem / ys[d]) % x.shape()[d]) * xs[d];
      rem %= ys[d];
    }
    std::memcpy(bytes_of(y) + i * es, bytes_of(x) + off * es, es);
  }
}

void run_split(const Node& n, In in, Out out, OpContext&) {
  const Tensor& x = need(n, in, 0);
  if (x.rank() == 0) n.fail("cannot split a scalar");
  int64_t axis = normalize_axis(n, n.get_int("axis", 0), x.rank());
  const int64_t dim = x.shape()[axis];
  std::vector<int64_t> parts = (in.size() > 1 && in[1]) ? read_ints(n, *in[1]) : n.get_ints("split");
  const int64_t k = static_cast<int64_t>(out.size());
  if (parts.empty()) {
    int64_t pieces = n.get_int("num_outputs", k);
    if (pieces != k || k <= 0) n.fail("num_outputs differs from the number of outputs");
    int64_t each = (dim + k - 1) / k;
    for (int64_t i = 0; i < k; ++i) parts.push_back(std::max<int64_t>(0, std::min(each, dim - i * each)));
  }
  if (static_cast<int64_t>(parts.size()) != k) n.fail("split sizes differ from the number of outputs");
  int64_t sum = 0;
  for (int64_t p : parts) {
    if (p < 0) n.fail("negative split size");
    sum += p;
  }
  if (sum != dim) n.fail("split sizes do not add up to the dimension");
  const size_t es = dtype_size(x.dtype());
  const int64_t outer = product(x.shape(), 0, axis), inner = product(x.shape(), axis + 1) * es;
  int64_t at = 0;
  for (int64_t i = 0; i < k; ++i) {
    std::vector<int64_t> shape = x.shape();
    shape[axis] = parts[i];
    Tensor y;
    y.resize(x.dtype(), shape);
    for (int64_t o = 0; o < outer; ++o)
      std::memcpy(bytes_of(y) + o * parts[i] * inner, bytes_of(x) + (o * dim + at) * inner, parts[i] * inner);
    at += parts[i];
    if (out[i]) *out[i] = std::move(y);
  }
}

void run_constant_of_shape(const Node& n, In in, Out out, OpContext&) {
  std::vector<int64_t> shape = read_ints(n, need(n, in, 0));
  const Attribute* v = n.find("value");
  DataType dt = v && v->t ? v->t->dtype() : DataType::Float;
  Tensor y(dt, shape);
  if (v && v->t) {
    if (v->t->size() != 1) n.fail("value must hold one element");
    const size_t es = dtype_size(dt);
    for (int64_t i = 0; i < y.size(); ++i) std::memcpy(bytes_of(y) + i * es, v->t->raw(), es);
  }
  *out[0] = std::move(y);
}

void run_range(const Node& n, In in, Out out, OpContext&) {
  const Tensor& s = need(n, in, 0);
  const Tensor& l = need(n, in, 1);
  const Tensor& d = need(n, in, 2);
  if (s.size() != 1 || l.size() != 1 || d.size() != 1) n.fail("start, limit and delta must be scalars");
  auto run = [&](auto tag) {
    using T = decltype(tag);
    T start = s.data<T>()[0], limit = l.data<T>()[0], delta = d.data<T>()[0];
    if (delta == 0) n.fail("delta is 0");
    double count = std::ceil((static_cast<double>(limit) - static_cast<double>(start)) / static_cast<double>(delta));
    int64_t k = count > 0 ? static_cast<int64_t>(count) : 0;
    if (k > (int64_t{1} << 31)) n.fail("range too long");
    out[0]->resize(s.dtype(), {k});
    for (int64_t i = 0; i < k; ++i) out[0]->data<T>()[i] = static_cast<T>(start + static_cast<T>(i) * delta);
  };
  switch (s.dtype()) {
    case DataType::Float: run(float{}); break;
    case DataType::Double: run(double{}); break;
    case DataType::Int32: run(int32_t{}); break;
    case DataType::Int64: run(int64_t{}); break;
    default: n.fail("unsupported element type");
  }
}

// Pad: constant, reflect, edge and wrap modes.
void run_pad(const Node& n, In in, Out out, OpContext& ctx) {
  const Tensor& x = need(n, in, 0);
  const int r = x.rank();
  std::vector<int64_t> pads = ctx.opset < 11 ? n.get_ints("pads") : read_ints(n, need(n, in, 1));
  std::vector<int64_t> axes;
  if (in.size() > 3 && in[3]) axes = read_ints(n, *in[3]);
  else for (int i = 0; i < r; ++i) axes.push_back(i);
  if (pads.size() != 2 * axes.size()) n.fail("pads must have two values per axis");
  std::vector<int64_t> before(r, 0), after(r, 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t a = normalize_axis(n, axes[i], r);
    before[a] = pads[i];
    after[a] = pads[i + axes.size()];
  }
  std::string mode = n.get_string("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge" && mode != "wrap") n.fail("mode '" + mode + "' is not supported");
  std::vector<int64_t> shape(r);
  for (int d = 0; d < r; ++d) {
    shape[d] = x.shape()[d] + before[d] + after[d];
    if (shape[d] < 0) n.fail("pads remove more than the dimension");
    if (mode == "reflect" && (before[d] > 0 || after[d] > 0) && x.shape()[d] < 2 && shape[d] != x.shape()[d])
      n.fail("reflect padding needs at least 2 values along a padded axis");
    if (mode != "constant" && x.shape()[d] == 0 && shape[d] > 0) n.fail("cannot pad an empty axis in mode " + mode);
  }
  const size_t es = dtype_size(x.dtype());
  Tensor& y = *out[0];
  y.resize(x.dtype(), shape);
  std::vector<uint8_t> fill(es, 0);
  if (ctx.opset < 11) {
    float v = n.get_float("value", 0);
    if (x.dtype() == DataType::Float) std::memcpy(fill.data(), &v, 4);
  } else if (in.size() > 2 && in[2] && in[2]->size() == 1) {
    if (in[2]->dtype() != x.dtype()) n.fail("constant_value of another type");
    std::memcpy(fill.data(), in[2]->raw(), es);
  }
  auto ys = strides_of(shape), xs = strides_of(x.shape());
  for (int64_t i = 0; i < y.size(); ++i) {
    int64_t off = 0, rem = i;
    bool outside = false;
    for (int d = 0; d < r; ++d) {
      int64_t c = rem / ys[d] - before[d];
      rem %= ys[d];
      const int64_t dim = x.shape()[d];
      if (c < 0 || c >= dim) {
        if (mode == "constant") { outside = true; break; }
        if (mode == "edge") c = c < 0 ? 0 : dim - 1;
        else if (mode == "wrap") c = ((c % dim) + dim) % dim;
        else {  // reflect, without repeating the edge
          const int64_t period = 2 * (dim - 1);
          c = ((c % period) + period) % period;
          if (c >= dim) c = period - c;
        }
      }
      off += c * xs[d];
    }
    std::memcpy(bytes_of(y) + i * es, outside ? fill.data() : bytes_of(x) + off * es, es);
  }
}

}  // namespace

void register_shape_ops(const OpRegistrar& r) {
  r.add("Reshape", run_reshape);
  r.add("Flatten", run_flatten);
  r.add("Shape", run_shape);
  r.add("Size", run_size);
  r.add("Squeeze", run_squeeze);
  r.add("Unsqueeze", run_unsqueeze);
  r.add("Transpose", run_transpose);
  r.add("Concat", run_concat);
  r.add("Gather", run_gather);
  r.add("Slice", run_slice);
  r.add("Expand", run_expand);
  r.add("Tile", run_tile);
  r.add("Split", run_split);
  r.add("ConstantOfShape", run_constant_of_shape);
  r.add("Range", run_range);
  r.add("Pad", run_pad);
}

}  // namespace minnow::onnx
