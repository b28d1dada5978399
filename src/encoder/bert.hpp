// BERT-family text encoders (BERT, MiniLM, the sentence-transformers models built on them),
// from a Hugging Face directory: config.json + safetensors weights (F32, F16 or BF16).
// Post-LayerNorm blocks: bidirectional self-attention and a GELU feed-forward, each added to
// its input and layer-normalized; absolute position and token-type embeddings.
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "formats/safetensors.hpp"
#include "kernels/bf16_gemm.hpp"
#include "kernels/ops.hpp"

namespace minnow {

class ThreadPool;

struct BertConfig {
  int64_t hidden = 0, n_layers = 0, n_heads = 0, intermediate = 0, max_positions = 0, type_vocab = 0, vocab = 0;
  float layer_norm_eps = 1e-12f;
  enum class Activation { GeluErf, GeluTanh, Relu } activation = Activation::GeluErf;
  int32_t pad_token_id = 0;
};

// Reads config.json of a BERT checkpoint; throws Error naming what is missing or unsupported.
BertConfig read_bert_config(const std::string& dir);

class BertEncoder {
 public:
  // dir: a Hugging Face BERT directory (config.json, model.safetensors). Weight names with
  // or without the "bert." prefix (BertModel or a BertFor* head checkpoint).
  // How the matrices are multiplied: F32 as stored (exact; F16/BF16 checkpoints widened
  // row by row), BF16 (rounded at load, bf16 products summed in f32: kernels/bf16_gemm.hpp),
  // or Q8_0 (quantized at load, the packed integer kernels; coarsest).
  enum class Precision { F32, BF16, Q8_0 };
  static std::unique_ptr<BertEncoder> load(const std::string& dir, Precision precision = Precision::F32);

  const BertConfig& config() const { return c_; }

  // The last hidden states of several token sequences at once: out holds sum(len) rows of
  // hidden values, the sequences' rows one after another. Each sequence attends only to
  // itself, so no padding is computed; a sequence's numbers do not depend on its batch.
  // Token types are all 0. Throws Error for an id out of range or a sequence longer than
  // max_positions.
  void forward(std::span<const std::span<const int32_t>> seqs, std::vector<float>& out, ThreadPool& pool) const;

 private:
  struct Norm {
    std::vector<float> w, b;
  };
  struct Linear {
    kernels::WeightView w{};     // F32/F16/BF16 rows, or packed Q8_0
    kernels::Bf16Matrix bf16{};  // Precision::BF16
    std::vector<float> b;
    void apply(const float* x, int64_t n_tokens, float* y, ThreadPool& pool) const;  // y = x W^T + b
  };
  struct Layer {
    Linear qkv, attn_out, up, down;  // qkv: the three projections as one matrix (q | k | v rows)
    Norm attn_norm, out_norm;
  };
  BertEncoder() = default;
  uint8_t* own(size_t bytes);
  Linear convert(const kernels::WeightView& w, std::vector<float> bias, Precision p);
  void attention(const float* qkv, std::span<const int64_t> starts, float* ctx, ThreadPool& pool) const;

  BertConfig c_;
  std::unique_ptr<SafetensorsCheckpoint> weights_;
  struct FreeAligned {
    void operator()(uint8_t* p) const;
  };
  std::vector<std::unique_ptr<uint8_t[], FreeAligned>> owned_;  // matrices made at load
  kernels::WeightView word_emb_{}, pos_emb_{}, type_emb_{};
  Norm emb_norm_;
  std::vector<Layer> layers_;
};

}  // namespace minnow
