// A loaded model: config, weights bound by name (pointing into the mapped files),
// tokenizer and chat template.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "kernels/ops.hpp"
#include "models/config.hpp"
#include "models/tensor_table.hpp"
#include "tokenizer/tokenizer.hpp"

namespace minnow {

struct LayerWeights {
  std::vector<float> attn_norm, ffn_norm;
  std::vector<float> post_attn_norm, post_ffn_norm;  // sandwich norms (empty when unused)
  std::vector<float> q_norm, k_norm;                 // per-head QK norms (empty when unused)
  std::vector<float> bq, bk, bv, bo;                 // projection biases (empty when unused)
  kernels::WeightView wq, wk, wv, wo, gate, up, down;
};

struct LoadedModel {
  ModelConfig config;
  std::shared_ptr<const void> storage;  // keeps the mapped file(s) the views point into
  std::unique_ptr<uint8_t[]> packed;    // the views' repacked copies (models/pack_weights.hpp)
  std::vector<TensorRef> tensors;       // every tensor of the file(s), for inspection
  kernels::WeightView token_embd;
  kernels::WeightView output;           // == token_embd when tied
  std::vector<float> output_norm;
  std::vector<float> rope_freq_factors;  // GGUF rope_freqs: divide each RoPE frequency (empty: none)
  std::vector<LayerWeights> layers;
  std::unique_ptr<Tokenizer> tokenizer;
  std::string chat_template;            // empty when the model has none
  std::string format;                   // "gguf" or "safetensors"
  std::string pack_layout;              // "rows8 v1" for a `minnow pack` file, else empty
};

// Opens a GGUF file or a Hugging Face checkpoint directory; throws Error naming the path
// and the problem.
std::unique_ptr<LoadedModel> load_model(const std::string& path);

}  // namespace minnow
