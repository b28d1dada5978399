#include "quant/quantize.hpp"

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "quant/block_quantizers.hpp"
#include "tensor/fp16.hpp"

namespace minnow {
namespace {

using BlockQuantizer = void (*)(const float*, uint8_t*, int64_t, const float*);

BlockQuantizer block_quantizer(DType t) {
  switch (t) {
    case DType::Q4_0: return quant::quantize_q4_0;
    case DType::Q4_1: return quant::quantize_q4_1;
    case DType::Q5_0: return quant::quantize_q5_0;
    case DType::Q5_1: return quant::quantize_q5_1;
    case DType::Q8_0: return quant::quantize_q8_0;
    case DType::Q4_K: return quant::quantize_q4_k;
    case DType::Q5_K: return quant::quantize_q5_k;
    case DType::Q6_K: return quant::quantize_q6_k;
    default: return nullptr;
  }
}

// Round to nearest even, NaN kept quiet (inputs are finite here anyway).
uint16_t fp32_to_bf16(float f) {
  const uint32_t u = fp32_to_bits(f);
  return static_cast<uint16_t>((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}

}  // namespace

bool can_quantize(DType t) {
  return t == DType::F32 || t == DType::F16 || t == DType::BF16 || block_quantizer(t) != nullptr;
}

void quantize_row(DType t, const float* x, int64_t n, void* dst, const float* importance) {
  const DTypeTraits& tr = dtype_traits(t);
  if (!can_quantize(t)) throw Error(std::string("quantize: cannot write type ") + tr.name);
  if (n % tr.block_size != 0)
    throw Error("quantize: a row of " + std::to_string(n) + " values is not a whole number of " + tr.name + " blocks (" +
                std::to_string(tr.block_size) + ")");
  float amax = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(x[i]))
      throw Error("quantize: value " + std::to_string(i) + " of the row is " + (std::isnan(x[i]) ? "NaN" : "infinite"));
    const float a = std::fabs(x[i]);
    amax = a > amax ? a : amax;
  }
  auto* out = static_cast<uint8_t*>(dst);
  switch (t) {
    case DType::F32: std::memcpy(out, x, static_cast<size_t>(n) * 4); return;
    case DType::F16:
      for (int64_t i = 0; i < n; ++i) {
        if (std::fabs(x[i]) >= 65520.0f) throw Error("quantize: value " + std::to_string(x[i]) + " overflows F16");
        const uint16_t h = fp32_to_fp16(x[i]);
        std::memcpy(out + 2 * i, &h, 2);
      }
      return;
    case DType::BF16:
      for (int64_t i = 0; i < n; ++i) {
        const uint16_t h = fp32_to_bf16(x[i]);
        std::memcpy(out + 2 * i, &h, 2);
      }
      return;
    default: break;
  }
  block_quantizer(t)(x, out, n / tr.block_size, importance);
  // Scales are f16: values beyond what they can reach dequantize to inf or NaN. Such a
  // tensor is better refused than written broken.
  thread_local std::vector<float> back;
  back.resize(static_cast<size_t>(n));
  tr.dequantize(out, back.data(), n / tr.block_size);
  for (int64_t i = 0; i < n; ++i)
    if (!std::isfinite(back[i]))
      throw Error("quantize: values up to " + std::to_string(amax) + " are beyond the range of " + tr.name +
                  "'s f16 scales (use F32 for this tensor)");
}

}  // namespace minnow
