// The tensors of a model file, format-neutral: a GGUF file and a safetensors checkpoint
// both become a table of named views, and one binding code path reads either.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "kernels/ops.hpp"
#include "tensor/dtype.hpp"

namespace minnow {

struct TensorRef {
  std::string name;
  std::string type_name;          // as the file names it ("Q4_K", "BF16", "I64", ...)
  std::optional<DType> type;      // nullopt: a type minnow cannot compute with
  std::vector<int64_t> dims;      // dims[0] fastest-varying (row length), as GGUF orders them
  uint64_t n_elements = 0, n_bytes = 0;
  const uint8_t* data = nullptr;
  bool packed = false;            // data is in kernels/packed.hpp's layout (a `minnow pack` file)
};

class TensorTable {
 public:
  explicit TensorTable(const std::vector<TensorRef>& tensors);
  const TensorRef* find(const std::string& name) const;
  const TensorRef& get(const std::string& name) const;  // throws Error naming a missing tensor

  // A matrix of `rows` rows of `cols` values (a vector when rows == 1) that the kernels can
  // run; throws Error on a shape or type mismatch.
  kernels::WeightView matrix(const std::string& name, int64_t cols, int64_t rows) const;
  static kernels::WeightView matrix(const TensorRef& t, int64_t cols, int64_t rows);
  // A vector of n values as f32, plus `offset` (Gemma stores norm weights as w - 1).
  std::vector<float> vector(const std::string& name, int64_t n, float offset = 0.0f) const;

 private:
  std::unordered_map<std::string, const TensorRef*> by_name_;
};

}  // namespace minnow
