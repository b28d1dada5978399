// Qwen3 (dense): no projection biases, RMSNorm over each head of Q and K.
#include "models/family.hpp"

namespace minnow {

const FamilySpec& qwen3_family() {
  static const FamilySpec spec{
      .name = "qwen3",
      .hf_model_types = {"qwen3"},
      .qk_norm = true,
  };
  return spec;
}

}  // namespace minnow
