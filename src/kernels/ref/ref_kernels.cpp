// Scalar reference kernels: the definition of correct for every faster version.
#include "kernels/ops.hpp"

namespace minnow::kernels {
namespace {

float dot_f32_ref(const float* a, const float* b, int64_t n) {
  double s = 0;  // double: the reference should not carry its own rounding noise
  for (int64_t i = 0; i < n; ++i) s += static_cast<double>(a[i]) * b[i];
  return static_cast<float>(s);
}

void gemm_f32_ref(const float* w, int64_t rows, const float* x, int64_t n_tokens, int64_t k, float* y, int64_t ldy) {
  for (int64_t t = 0; t < n_tokens; ++t)
    for (int64_t r = 0; r < rows; ++r) y[t * ldy + r] = dot_f32_ref(w + r * k, x + t * k, k);
}

}  // namespace

DotRowFn KernelTable::dot_row(DType t) const {
  switch (t) {
    case DType::Q4_0: return q4_0;
    case DType::Q4_1: return q4_1;
    case DType::Q8_0: return q8_0;
    case DType::F16: return f16;
    default: return nullptr;
  }
}

const KernelTable& ref_kernels() {
  static const KernelTable t{"scalar", dot_f32_ref, gemm_f32_ref, nullptr, nullptr, nullptr, nullptr};
  return t;
}

}  // namespace minnow::kernels
