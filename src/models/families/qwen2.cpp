// Qwen2 and Qwen2.5: Llama's block with biases on the Q, K and V projections.
#include "models/family.hpp"

namespace minnow {

const FamilySpec& qwen2_family() {
  static const FamilySpec spec{
      .name = "qwen2",
      .hf_model_types = {"qwen2"},
      .qkv_bias = true,
  };
  return spec;
}

}  // namespace minnow
