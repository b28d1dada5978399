// Keys and values of every layer for up to `capacity` positions, allocated once per
// session, stored as f32, f16 (half the memory and bandwidth) or Q8_0 (about a quarter:
// blocks of 32 int8 with an f16 scale, head_dim a multiple of 32); attention's kernels
// read f16 and Q8_0 rows directly. Rows of consecutive positions of a layer are
// row_bytes() apart. Pages are left untouched until written, so a large context costs RSS
// only for the positions actually used.
#pragma once
#include <cstdint>
#include <memory>

#include "models/config.hpp"
#include "tensor/dtype.hpp"

namespace minnow {

class KvCache {
 public:
  // type: DType::F32, F16 or Q8_0 (throws Error otherwise, or for Q8_0 when head_dim is
  // not a multiple of 32).
  KvCache(const ModelConfig& c, int capacity, DType type = DType::F32);

  int capacity() const { return capacity_; }
  DType type() const { return type_; }
  int64_t row_size() const { return row_; }  // values per position per layer
  size_t row_bytes() const { return row_bytes_; }
  size_t bytes() const { return 2 * static_cast<size_t>(layers_) * layer_bytes_; }

  // Stores row_size() floats as the position's keys / values.
  void store_k(int layer, int pos, const float* src) { store(k_.get(), layer, pos, src); }
  void store_v(int layer, int pos, const float* src) { store(v_.get(), layer, pos, src); }
  // The stored row (row_size() values of type()).
  const void* k(int layer, int pos) const { return at(k_.get(), layer, pos); }
  const void* v(int layer, int pos) const { return at(v_.get(), layer, pos); }
  // Where a position's row is written by kernels that produce it in place of store_k /
  // store_v (row_size() values of type()).
  void* k_dst(int layer, int pos) { return k_.get() + offset(layer, pos); }
  void* v_dst(int layer, int pos) { return v_.get() + offset(layer, pos); }
  // Where KV head h's head_dim values start within a row.
  size_t head_offset(int h) const { return static_cast<size_t>(h) * head_bytes_; }

 private:
  size_t offset(int layer, int pos) const {
    return static_cast<size_t>(layer) * layer_bytes_ + static_cast<size_t>(pos) * row_bytes_;
  }
  const void* at(const uint8_t* base, int layer, int pos) const { return base + offset(layer, pos); }
  void store(uint8_t* base, int layer, int pos, const float* src);

  int capacity_, layers_;
  DType type_;
  int64_t row_;
  size_t row_bytes_, head_bytes_, layer_bytes_;
  std::unique_ptr<uint8_t[]> k_, v_;  // default-initialized: no page is touched here
};

}  // namespace minnow
