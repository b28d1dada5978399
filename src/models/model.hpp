// A loaded model: config, weights bound by name (pointing into the mapped file),
// tokenizer and chat template.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "formats/gguf.hpp"
#include "kernels/ops.hpp"
#include "models/config.hpp"
#include "tokenizer/tokenizer.hpp"

namespace minnow {

struct LayerWeights {
  std::vector<float> attn_norm, ffn_norm;
  kernels::WeightView wq, wk, wv, wo, gate, up, down;
};

struct LoadedModel {
  ModelConfig config;
  std::unique_ptr<GgufFile> file;  // owns the mapping the weight views point into
  kernels::WeightView token_embd;
  kernels::WeightView output;      // == token_embd when tied
  std::vector<float> output_norm;
  std::vector<LayerWeights> layers;
  std::unique_ptr<Tokenizer> tokenizer;
  std::string chat_template;      // empty when the file has none
};

// Opens a model file; throws Error naming the file and the problem.
std::unique_ptr<LoadedModel> load_model(const std::string& path);

}  // namespace minnow
