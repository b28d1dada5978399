// Hyper-parameters of a model, read from explicit file metadata (never guessed from
// shapes). Family differences (biases, norms, activation, attention pattern, RoPE) are
// fields here that the one shared transformer block reads.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace minnow {

enum class Activation : uint8_t { SiLU, GeluTanh };  // gate activation: SwiGLU | GeGLU

// How RoPE pairs the dimensions of a head: GGUF stores Llama's Q/K rows permuted so that
// adjacent elements pair up; everything else pairs element i with i + head_dim/2.
enum class RopeStyle : uint8_t { AdjacentPairs, HalfSplit };

struct RopeScaling {
  enum class Type : uint8_t { None, Linear, Llama3 } type = Type::None;
  float factor = 1.0f;
  float low_freq_factor = 1.0f, high_freq_factor = 4.0f;  // Llama 3
  int original_ctx = 8192;                                // Llama 3
};

struct ModelConfig {
  std::string arch;     // family name, e.g. "llama", "qwen2", "gemma3"
  std::string name;     // general.name or the directory name
  int n_layers = 0;
  int d_model = 0;
  int n_heads = 0;
  int n_kv_heads = 0;
  int head_dim = 0;
  int d_ff = 0;
  int vocab_size = 0;
  int ctx_train = 0;
  float rms_eps = 1e-5f;
  bool tied_output = false;  // output head shares the token embedding

  // RoPE: full-attention layers use rope_base with rope_scaling; sliding-window layers use
  // rope_base_local unscaled (Gemma 3).
  RopeStyle rope_style = RopeStyle::AdjacentPairs;
  float rope_base = 10000.0f;
  float rope_base_local = 10000.0f;
  RopeScaling rope_scaling;

  bool qkv_bias = false;       // biases on Q, K, V projections (Qwen2)
  bool o_bias = false;         // bias on the output projection
  bool qk_norm = false;        // RMSNorm over each head of Q and K before RoPE (Qwen3, Gemma 3)
  bool sandwich_norm = false;  // RMSNorm after attention and after the FFN too (Gemma 3)
  Activation activation = Activation::SiLU;
  float embed_scale = 1.0f;    // embeddings multiplied by this (Gemma: sqrt(d_model))
  float attn_scale = 0.0f;     // query scale; 0: 1/sqrt(head_dim)
  float attn_softcap = 0.0f;   // scores -> cap * tanh(scores / cap); 0: off
  float final_softcap = 0.0f;  // same for the output logits
  int sliding_window = 0;      // keys a sliding-window layer's query sees (itself included)
  std::vector<uint8_t> layer_sliding;  // per layer: 1 = sliding-window attention

  bool is_sliding(int layer) const {
    return sliding_window > 0 && static_cast<size_t>(layer) < layer_sliding.size() && layer_sliding[static_cast<size_t>(layer)];
  }
};

}  // namespace minnow
