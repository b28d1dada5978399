// Gemma 3 (text): QK norms, sandwich norms, GeGLU, scaled embeddings, and sliding-window
// layers with their own RoPE base between global layers.
#include "models/family.hpp"

namespace minnow {

const FamilySpec& gemma3_family() {
  static const FamilySpec spec{
      .name = "gemma3",
      .hf_model_types = {"gemma3_text"},
      .qk_norm = true,
      .sandwich_norm = true,
      .activation = Activation::GeluTanh,
      .scale_embeddings = true,
      .hf_norm_offset = 1.0f,
      .gguf_global_every = 6,  // 5 sliding-window layers, then 1 global
      .gguf_rope_base_local = 10000.0f,
      .hf_ffn_norm = "pre_feedforward_layernorm",
      .hf_post_attn_norm = "post_attention_layernorm",
      .hf_post_ffn_norm = "post_feedforward_layernorm",
  };
  return spec;
}

}  // namespace minnow
