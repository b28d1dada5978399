// What sets one model family apart, as data. The loaders (GGUF, Hugging Face) read the
// common hyper-parameters and tensors; a FamilySpec says which optional parts a family
// has and what the formats leave unsaid. Adding a family: one file in families/, one line
// in registry.cpp, one parity test (docs/adding-a-model.md).
#pragma once
#include <string_view>
#include <vector>

#include "models/config.hpp"

namespace minnow {

struct FamilySpec {
  std::string_view name;                         // GGUF general.architecture
  std::vector<std::string_view> hf_model_types;  // config.json "model_type" values
  bool qkv_bias = false;
  bool qk_norm = false;
  bool sandwich_norm = false;
  Activation activation = Activation::SiLU;
  bool scale_embeddings = false;  // embeddings times sqrt(d_model)
  float hf_norm_offset = 0.0f;    // added to RMSNorm weights from HF files (Gemma stores w - 1)
  RopeStyle gguf_rope_style = RopeStyle::HalfSplit;
  // Facts llama.cpp hard-codes for the family, used when GGUF metadata is silent.
  int gguf_global_every = 0;  // with a sliding window: every Nth layer is global
  float gguf_rope_base_local = 10000.0f;
  // Hugging Face per-layer norm names that differ between families.
  std::string_view hf_ffn_norm = "post_attention_layernorm";
  std::string_view hf_post_attn_norm = {};  // sandwich norms only
  std::string_view hf_post_ffn_norm = {};
  // The family's turn format, for files that carry no chat template (empty: none).
  std::string_view default_chat_template = {};
};

const FamilySpec& llama_family();
const FamilySpec& qwen2_family();
const FamilySpec& qwen3_family();
const FamilySpec& gemma3_family();

// nullptr when unknown.
const FamilySpec* family_by_gguf_arch(std::string_view arch);
const FamilySpec* family_by_hf_model_type(std::string_view model_type);
std::string supported_families();  // "llama, qwen2, ..." for error messages

}  // namespace minnow
