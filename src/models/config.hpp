// Hyper-parameters of a model, read from explicit file metadata (never guessed from shapes).
#pragma once
#include <cstdint>
#include <string>

namespace minnow {

struct ModelConfig {
  std::string arch;     // general.architecture, e.g. "llama"
  std::string name;     // general.name
  int n_layers = 0;
  int d_model = 0;
  int n_heads = 0;
  int n_kv_heads = 0;
  int head_dim = 0;
  int d_ff = 0;
  int vocab_size = 0;
  int ctx_train = 0;
  int rope_dim = 0;       // rotated dimensions per head (== head_dim for Llama)
  float rope_base = 10000.0f;
  float rms_eps = 1e-5f;
  bool tied_output = false;  // output head shares the token embedding
};

}  // namespace minnow
