// minnow's general inference runtime for ONNX models (CNNs for classification, detection,
// OCR), shaped like MNN's: an Interpreter holds a loaded model, a Session binds it to
// input shapes and a thread count, Tensors go in and out.
//
//   auto net = minnow::onnx::Interpreter::load("det.onnx");
//   auto session = net->create_session({{"x", {1, 3, 640, 640}}});
//   fill(session->input("x").data<float>());
//   session->run();
//   const minnow::onnx::Tensor& y = session->output(net->outputs()[0].name);
//
// A model that uses an operator minnow lacks is refused at load with one line naming the
// operator and the node; malformed files, shapes and values throw minnow::Error.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#ifndef MINNOW_API
#define MINNOW_API __attribute__((visibility("default")))
#endif

namespace minnow::onnx {

// Element types, numbered as ONNX's TensorProto.DataType.
enum class DataType : int32_t { Undefined = 0, Float = 1, UInt8 = 2, Int8 = 3, Int32 = 6, Int64 = 7, Bool = 9, Double = 11 };
MINNOW_API const char* dtype_name(DataType t);
MINNOW_API size_t dtype_size(DataType t);  // bytes per element; 0 for Undefined

class MINNOW_API Tensor {
 public:
  Tensor() = default;
  Tensor(DataType type, std::vector<int64_t> shape);  // zero-filled
  // Copies take the values only (a buffer may be larger than its tensor), into the
  // buffer this tensor already has when it is large enough.
  Tensor(const Tensor& other);
  Tensor& operator=(const Tensor& other);
  Tensor(Tensor&&) noexcept = default;
  Tensor& operator=(Tensor&&) noexcept = default;

  DataType dtype() const { return type_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int rank() const { return static_cast<int>(shape_.size()); }
  int64_t size() const { return size_; }  // elements
  size_t bytes() const { return static_cast<size_t>(size_) * dtype_size(type_); }
  void* raw() { return buf_.data(); }
  const void* raw() const { return buf_.data(); }
  template <class T>
  T* data() { check(type_of<T>()); return reinterpret_cast<T*>(buf_.data()); }
  template <class T>
  const T* data() const { check(type_of<T>()); return reinterpret_cast<const T*>(buf_.data()); }

  // Gives the tensor a new type and shape; keeps the buffer when it is large enough, so a
  // session that runs again with the same shapes allocates nothing. Contents are unspecified.
  void resize(DataType type, std::vector<int64_t> shape);
  std::string shape_string() const;  // "[1,3,224,224]"
  // Exchanges buffers (not types or shapes) with another tensor: how a session passes the
  // memory of tensors it no longer needs on to the next ones.
  void swap_buffer(Tensor& other) noexcept { buf_.swap(other.buf_); }

  template <class T>
  static constexpr DataType type_of();

 private:
  void check(DataType want) const;
  DataType type_ = DataType::Undefined;
  std::vector<int64_t> shape_;
  int64_t size_ = 0;
  std::vector<uint64_t> buf_;  // 8-byte aligned for every element type
};

template <> constexpr DataType Tensor::type_of<float>() { return DataType::Float; }
template <> constexpr DataType Tensor::type_of<double>() { return DataType::Double; }
template <> constexpr DataType Tensor::type_of<uint8_t>() { return DataType::UInt8; }
template <> constexpr DataType Tensor::type_of<int8_t>() { return DataType::Int8; }
template <> constexpr DataType Tensor::type_of<int32_t>() { return DataType::Int32; }
template <> constexpr DataType Tensor::type_of<int64_t>() { return DataType::Int64; }
template <> constexpr DataType Tensor::type_of<bool>() { return DataType::Bool; }

struct SessionOptions {
  int n_threads = 0;     // <= 0: one per core
  bool profile = false;  // time every node (Session::profile)
  bool optimize = true;  // fold constants, fuse Conv + BatchNormalization + activation
};

struct NodeTime {
  std::string node, op_type;
  double ms = 0;  // summed over the runs so far
  std::string output_shape;  // of the first output, at the last run
};

struct IoInfo {
  std::string name;
  DataType dtype = DataType::Undefined;
  std::vector<int64_t> shape;  // -1 where the model leaves a dimension symbolic
};

class Graph;
class Session;

class MINNOW_API Interpreter {
 public:
  static std::unique_ptr<Interpreter> load(const std::string& path);
  static std::unique_ptr<Interpreter> from_bytes(std::span<const uint8_t> model);
  ~Interpreter();

  const std::vector<IoInfo>& inputs() const;
  const std::vector<IoInfo>& outputs() const;
  int64_t opset() const;
  size_t node_count() const;
  std::string metadata(const std::string& key) const;  // a metadata_props value, "" when absent
  // A session for these input shapes; inputs not named keep the model's shape, which must
  // then be fully static.
  std::unique_ptr<Session> create_session(const std::map<std::string, std::vector<int64_t>>& input_shapes = {},
                                          const SessionOptions& options = {}) const;

 private:
  explicit Interpreter(std::shared_ptr<const Graph> graph);
  std::shared_ptr<const Graph> graph_;
};

class MINNOW_API Session {
 public:
  ~Session();
  Tensor& input(const std::string& name);  // fill it before run(); its shape is fixed
  void run();
  const Tensor& output(const std::string& name) const;
  std::vector<std::string> input_names() const;
  std::vector<std::string> output_names() const;
  size_t node_count() const;  // after optimization
  const std::vector<NodeTime>& profile() const;
  int runs() const;

  struct Impl;
  explicit Session(std::unique_ptr<Impl> impl);

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace minnow::onnx
