// minnow's sentence-embedding API: a BERT-family encoder (all-MiniLM-L6-v2 and the like)
// turns texts into fixed-size vectors for search, clustering and retrieval.
//
//   auto emb = minnow::Embedder::load("models/all-MiniLM-L6-v2");
//   std::vector<float> v = emb->embed({"A cat sits on the mat.", "Un chat."});  // 2 x dim()
//
// The directory is a sentence-transformers model (modules.json: Transformer, Pooling,
// Normalize) or a plain Hugging Face BERT directory (mean pooling, no normalization).
// Errors are thrown as minnow::Error with a one-line message.
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#ifndef MINNOW_API
#define MINNOW_API __attribute__((visibility("default")))
#endif

namespace minnow {

class SentenceEmbedder;

struct EmbedderOptions {
  int n_threads = 0;  // <= 0: one per core
  // How the encoder multiplies its matrices:
  //  BF16 (default): weights and activations rounded to bfloat16, products summed in f32;
  //    twice the f32 rate on CPUs with AVX512-BF16, half of F32's weight memory; cosine to
  //    the F32 result ~0.99999 (docs/embeddings.md).
  //  F32: in f32 as the checkpoint's values (the exact reference).
  //  Q8_0: weights quantized to 8 bits (blocks of 32) for the integer kernels; cosine
  //    ~0.9998, below the 0.9999 that search indexes usually need: for experiments.
  enum class Precision { BF16, F32, Q8_0 } precision = Precision::BF16;
};

class MINNOW_API Embedder {
 public:
  static std::unique_ptr<Embedder> load(const std::string& dir, const EmbedderOptions& options = {});
  ~Embedder();

  int dim() const;         // floats per embedding
  int max_tokens() const;  // longer texts are truncated to this many tokens ([CLS] and [SEP] included)
  bool normalized() const; // embeddings have unit length (cosine similarity = dot product)
  std::string pooling() const;  // "mean", "cls", "max" or "mean_sqrt_len"

  // The token ids a text is embedded from (truncated as embed() truncates it).
  std::vector<int32_t> tokenize(std::string_view text) const;
  // One embedding per text, dim() floats each, one after another. Texts go through the
  // encoder batch_size at a time without padding (each attends only to itself), so an
  // embedding does not depend on the batch it was in. n_tokens (if given) receives the
  // number of tokens encoded. One call at a time per Embedder (it owns a thread pool).
  std::vector<float> embed(std::span<const std::string> texts, int batch_size = 32, int64_t* n_tokens = nullptr);
  // The same from token ids (each sequence as tokenize() gives it; truncated alike).
  std::vector<float> embed_tokens(std::span<const std::vector<int32_t>> ids, int batch_size = 32,
                                  int64_t* n_tokens = nullptr);
  int vocab_size() const;
  std::vector<float> embed(std::initializer_list<std::string> texts) {
    return embed(std::span<const std::string>(texts.begin(), texts.size()));
  }

 private:
  explicit Embedder(std::unique_ptr<SentenceEmbedder> e);
  std::unique_ptr<SentenceEmbedder> e_;
};

}  // namespace minnow
