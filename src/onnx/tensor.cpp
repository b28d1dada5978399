#include <algorithm>
#include <cstring>

#include "base/error.hpp"
#include "minnow/onnx.hpp"

namespace minnow::onnx {

const char* dtype_name(DataType t) {
  switch (t) {
    case DataType::Float: return "float32";
    case DataType::Double: return "float64";
    case DataType::UInt8: return "uint8";
    case DataType::Int8: return "int8";
    case DataType::Int32: return "int32";
    case DataType::Int64: return "int64";
    case DataType::Bool: return "bool";
    default: return "undefined";
  }
}

size_t dtype_size(DataType t) {
  switch (t) {
    case DataType::Float: case DataType::Int32: return 4;
    case DataType::Double: case DataType::Int64: return 8;
    case DataType::UInt8: case DataType::Int8: case DataType::Bool: return 1;
    default: return 0;
  }
}

Tensor::Tensor(DataType type, std::vector<int64_t> shape) {
  resize(type, std::move(shape));
  std::memset(buf_.data(), 0, buf_.size() * sizeof(uint64_t));
}

Tensor::Tensor(const Tensor& other) { *this = other; }

Tensor& Tensor::operator=(const Tensor& other) {
  if (this == &other) return *this;
  type_ = other.type_;
  shape_ = other.shape_;
  size_ = other.size_;
  const size_t words = std::max<size_t>(1, (other.bytes() + sizeof(uint64_t) - 1) / sizeof(uint64_t));
  if (buf_.size() < words) buf_.resize(words);
  std::copy_n(other.buf_.begin(), std::min(words, other.buf_.size()), buf_.begin());
  return *this;
}

void Tensor::resize(DataType type, std::vector<int64_t> shape) {
  if (dtype_size(type) == 0) throw Error("onnx: tensor of an unsupported element type");
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) throw Error("onnx: negative dimension in shape");
    if (d && n > (int64_t{1} << 32) / d) throw Error("onnx: tensor of more than 2^32 elements");
    n *= d;
  }
  if (static_cast<size_t>(n) * dtype_size(type) > (size_t{1} << 31)) throw Error("onnx: tensor of more than 2 GiB");
  type_ = type;
  shape_ = std::move(shape);
  size_ = n;
  // At least one word, so data pointers are never null (memcpy of 0 bytes from null is UB).
  size_t words = std::max<size_t>(1, (static_cast<size_t>(n) * dtype_size(type) + 7) / 8);
  if (buf_.size() < words) buf_.resize(words);
}

std::string Tensor::shape_string() const {
  std::string s = "[";
  for (size_t i = 0; i < shape_.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(shape_[i]);
  }
  return s + "]";
}

void Tensor::check(DataType want) const {
  if (want != type_)
    throw Error(std::string("onnx: tensor holds ") + dtype_name(type_) + ", accessed as " + dtype_name(want));
}

}  // namespace minnow::onnx
