#include "models/tensor_table.hpp"

#include "base/error.hpp"

namespace minnow {
namespace {
[[noreturn]] void fail(const std::string& msg) { throw Error("model: " + msg); }
}  // namespace

TensorTable::TensorTable(const std::vector<TensorRef>& tensors) {
  for (const auto& t : tensors) by_name_.emplace(t.name, &t);
}

const TensorRef* TensorTable::find(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

const TensorRef& TensorTable::get(const std::string& name) const {
  const TensorRef* t = find(name);
  if (!t) fail("missing tensor '" + name + "'");
  return *t;
}

kernels::WeightView TensorTable::matrix(const TensorRef& t, int64_t cols, int64_t rows) {
  const bool ok = t.dims.size() == 2 ? (t.dims[0] == cols && t.dims[1] == rows)
                                     : (t.dims.size() == 1 && rows == 1 && t.dims[0] == cols);
  if (!ok) {
    std::string have;
    for (size_t i = 0; i < t.dims.size(); ++i) have += (i ? ", " : "") + std::to_string(t.dims[i]);
    fail("tensor '" + t.name + "' has shape [" + have + "], expected [" + std::to_string(cols) +
         (rows == 1 ? "" : ", " + std::to_string(rows)) + "] (fastest-varying first)");
  }
  if (!t.type || !dtype_traits(*t.type).dequantize)
    fail("tensor '" + t.name + "' has type " + t.type_name + ", which minnow does not support yet");
  if (t.packed)  // used in place: data and packed both point at the packed rows
    return {*t.type, t.data, rows, cols, static_cast<size_t>(*dtype_bytes(*t.type, static_cast<uint64_t>(cols))), t.data};
  return {*t.type, t.data, rows, cols, static_cast<size_t>(t.n_bytes / static_cast<uint64_t>(rows))};
}

kernels::WeightView TensorTable::matrix(const std::string& name, int64_t cols, int64_t rows) const {
  return matrix(get(name), cols, rows);
}

std::vector<float> TensorTable::vector(const std::string& name, int64_t n, float offset) const {
  kernels::WeightView w = matrix(name, n, 1);
  std::vector<float> out(static_cast<size_t>(n));
  kernels::dequantize_row(w, 0, out.data());
  if (offset != 0.0f)
    for (float& x : out) x += offset;
  return out;
}

}  // namespace minnow
