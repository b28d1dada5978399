#include "models/kv_cache.hpp"

#include <cstring>

#include "base/error.hpp"
#include "kernels/ops.hpp"

namespace minnow {

KvCache::KvCache(const ModelConfig& c, int capacity, DType type)
    : capacity_(capacity), layers_(c.n_layers), type_(type), row_(int64_t{c.n_kv_heads} * c.head_dim) {
  if (type != DType::F32 && type != DType::F16 && type != DType::Q8_0)
    throw Error(std::string("KV cache: type ") + dtype_name(type) + " is not supported (supported: f32, f16, q8_0)");
  if (type == DType::Q8_0 && c.head_dim % 32 != 0)
    throw Error("KV cache: q8_0 needs a head dimension that is a multiple of 32 (this model's is " +
                std::to_string(c.head_dim) + "); use f16");
  const DTypeTraits& tr = dtype_traits(type);
  head_bytes_ = static_cast<size_t>(c.head_dim / tr.block_size * tr.block_bytes);
  row_bytes_ = head_bytes_ * static_cast<size_t>(c.n_kv_heads);
  layer_bytes_ = row_bytes_ * static_cast<size_t>(capacity);
  const size_t n = static_cast<size_t>(layers_) * layer_bytes_;
  k_.reset(new uint8_t[n]);
  v_.reset(new uint8_t[n]);
}

void KvCache::store(uint8_t* base, int layer, int pos, const float* src) {
  uint8_t* dst = base + offset(layer, pos);
  switch (type_) {
    case DType::F32: std::memcpy(dst, src, static_cast<size_t>(row_) * sizeof(float)); break;
    case DType::F16: kernels::active().f32_to_f16(src, reinterpret_cast<uint16_t*>(dst), row_); break;
    default: quantize_q8_0(src, dst, row_ / 32); break;
  }
}

}  // namespace minnow
