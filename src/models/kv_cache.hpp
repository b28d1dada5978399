// Keys and values of every layer for up to `capacity` positions, allocated once per
// session, stored as f32 or f16 (half the memory and bandwidth; attention's kernels
// read f16 rows directly). Rows of consecutive positions of a layer are row_size() values
// apart. Pages are left untouched until written, so a large context costs RSS only for
// the positions actually used.
#pragma once
#include <cstdint>
#include <memory>

#include "models/config.hpp"
#include "tensor/dtype.hpp"

namespace minnow {

class KvCache {
 public:
  // type: DType::F32 or DType::F16 (throws Error otherwise).
  KvCache(const ModelConfig& c, int capacity, DType type = DType::F32);

  int capacity() const { return capacity_; }
  DType type() const { return type_; }
  int64_t row_size() const { return row_; }  // values per position per layer
  size_t bytes() const { return 2 * static_cast<size_t>(layers_) * static_cast<size_t>(layer_stride_) * elem_; }

  // Stores row_size() floats as the position's keys / values.
  void store_k(int layer, int pos, const float* src) { store(k_.get(), layer, pos, src); }
  void store_v(int layer, int pos, const float* src) { store(v_.get(), layer, pos, src); }
  // The stored row (row_size() values of type()).
  const void* k(int layer, int pos) const { return at(k_.get(), layer, pos); }
  const void* v(int layer, int pos) const { return at(v_.get(), layer, pos); }

 private:
  size_t offset(int layer, int pos) const {
    return (static_cast<size_t>(layer) * static_cast<size_t>(layer_stride_) + static_cast<size_t>(pos) * static_cast<size_t>(row_)) * elem_;
  }
  const void* at(const uint8_t* base, int layer, int pos) const { return base + offset(layer, pos); }
  void store(uint8_t* base, int layer, int pos, const float* src);

  int capacity_, layers_;
  DType type_;
  int64_t row_, layer_stride_;
  size_t elem_;
  std::unique_ptr<uint8_t[]> k_, v_;  // default-initialized: no page is touched here
};

}  // namespace minnow
