// Binds the per-layer weights of any family from either format: the formats differ only
// in tensor names, given as a LayerNames table (what follows the layer prefix).
#pragma once
#include <string>

#include "models/model.hpp"

namespace minnow {

struct LayerNames {
  std::string prefix;  // before the layer number: "blk." / "model.layers."
  std::string attn_norm, ffn_norm, post_attn_norm, post_ffn_norm;
  std::string wq, wk, wv, wo, gate, up, down;  // "<name>.weight" / "<name>.bias"
  std::string q_norm, k_norm;
};

// Fills m.layers for m.config (which says which optional tensors exist); norm weights get
// norm_offset added (Gemma's Hugging Face files store w - 1). Throws Error naming a missing
// or misshapen tensor.
void bind_layers(const TensorTable& t, const LayerNames& n, float norm_offset, LoadedModel& m);

}  // namespace minnow
