// Llama 1/2/3 and relatives (SmolLM, TinyLlama, Mistral-style without sliding windows).
#include "models/family.hpp"

namespace minnow {

const FamilySpec& llama_family() {
  static const FamilySpec spec{
      .name = "llama",
      .hf_model_types = {"llama"},
      .gguf_rope_style = RopeStyle::AdjacentPairs,  // llama.cpp's converter permutes Q/K rows
  };
  return spec;
}

}  // namespace minnow
