// Gemma 3 (text): QK norms, sandwich norms, GeGLU, scaled embeddings, and sliding-window
// layers with their own RoPE base between global layers.
#include "models/family.hpp"

namespace minnow {
namespace {

// Gemma's turn format (some GGUF files omit the template): a system message is folded
// into the first user turn, the assistant speaks as "model".
constexpr std::string_view kTurns =
    "{{ bos_token }}{% set ns = namespace(prefix='') %}"
    "{% for m in messages %}"
    "{% if m['role'] == 'system' %}{% set ns.prefix = m['content'] ~ '\n\n' %}"
    "{% else %}{{ '<start_of_turn>' ~ ('model' if m['role'] == 'assistant' else m['role']) ~ '\n' ~ ns.prefix ~ "
    "m['content'] | trim ~ '<end_of_turn>\n' }}{% set ns.prefix = '' %}{% endif %}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<start_of_turn>model\n' }}{% endif %}";

}  // namespace

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
      .default_chat_template = kTurns,
  };
  return spec;
}

}  // namespace minnow
