// Keys and values of every layer for up to `capacity` positions, allocated once per
// session. Pages are left untouched until written, so a large context costs RSS only for
// the positions actually used.
#pragma once
#include <cstdint>
#include <memory>

#include "models/config.hpp"

namespace minnow {

class KvCache {
 public:
  KvCache(const ModelConfig& c, int capacity)
      : capacity_(capacity),
        row_(int64_t{c.n_kv_heads} * c.head_dim),
        layer_stride_(int64_t{capacity} * row_),
        k_(new float[static_cast<size_t>(c.n_layers) * static_cast<size_t>(layer_stride_)]),
        v_(new float[static_cast<size_t>(c.n_layers) * static_cast<size_t>(layer_stride_)]) {}

  int capacity() const { return capacity_; }
  int64_t row_size() const { return row_; }  // floats per position per layer
  float* k(int layer, int pos) { return k_.get() + layer * layer_stride_ + pos * row_; }
  float* v(int layer, int pos) { return v_.get() + layer * layer_stride_ + pos * row_; }

 private:
  int capacity_;
  int64_t row_, layer_stride_;
  std::unique_ptr<float[]> k_, v_;  // default-initialized: no page is touched here
};

}  // namespace minnow
