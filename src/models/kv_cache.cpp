#include "models/kv_cache.hpp"

#include <cstring>

#include "base/error.hpp"
#include "kernels/ops.hpp"

namespace minnow {

KvCache::KvCache(const ModelConfig& c, int capacity, DType type)
    : capacity_(capacity),
      layers_(c.n_layers),
      type_(type),
      row_(int64_t{c.n_kv_heads} * c.head_dim),
      layer_stride_(int64_t{capacity} * row_),
      elem_(type == DType::F16 ? 2 : 4) {
  if (type != DType::F32 && type != DType::F16)
    throw Error(std::string("KV cache: type ") + dtype_name(type) + " is not supported (supported: f32, f16)");
  const size_t n = static_cast<size_t>(layers_) * static_cast<size_t>(layer_stride_) * elem_;
  k_.reset(new uint8_t[n]);
  v_.reset(new uint8_t[n]);
}

void KvCache::store(uint8_t* base, int layer, int pos, const float* src) {
  uint8_t* dst = base + offset(layer, pos);
  if (type_ == DType::F32) std::memcpy(dst, src, static_cast<size_t>(row_) * sizeof(float));
  else kernels::active().f32_to_f16(src, reinterpret_cast<uint16_t*>(dst), row_);
}

}  // namespace minnow
