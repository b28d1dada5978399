// A sentence-embedding model: WordPiece tokenizer, BERT encoder, pooling and optional L2
// normalization, configured as sentence-transformers configures them (modules.json,
// sentence_bert_config.json, 1_Pooling/config.json).
#pragma once
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/thread_pool.hpp"
#include "encoder/bert.hpp"
#include "tokenizer/tokenizer.hpp"

namespace minnow {

enum class Pooling { Mean, Cls, Max, MeanSqrtLen };
const char* pooling_name(Pooling p);

struct SentenceConfig {
  Pooling pooling = Pooling::Mean;
  bool normalize = false;
  bool lowercase_input = false;  // sentence_bert_config.json do_lower_case
  int64_t max_tokens = 0;        // 0: the encoder's max_positions
};

// Reads a sentence-transformers directory's configuration; a plain BERT directory gives
// the defaults. Throws Error naming a module or option that is not supported.
SentenceConfig read_sentence_config(const std::string& dir);

// Pools rows [first, first + len) of hidden (dim values each) into out (dim values).
void pool_tokens(const float* hidden, int64_t len, int64_t dim, Pooling p, bool normalize, float* out);

class SentenceEmbedder {
 public:
  SentenceEmbedder(const std::string& dir, int n_threads, BertEncoder::Precision precision);

  int64_t dim() const { return encoder_->config().hidden; }
  const SentenceConfig& config() const { return cfg_; }
  int64_t vocab_size() const { return encoder_->config().vocab; }
  // Token ids of a text with [CLS] and [SEP], truncated to max_tokens.
  std::vector<int32_t> tokenize(std::string_view text) const;
  void truncate(std::vector<int32_t>& ids) const;  // to max_tokens, keeping a final [SEP]
  // See Embedder::embed; throws Error for an id outside the vocabulary.
  std::vector<float> embed(std::span<const std::vector<int32_t>> ids, int batch_size, int64_t* n_tokens);

 private:
  SentenceConfig cfg_;
  std::unique_ptr<Tokenizer> tokenizer_;
  std::unique_ptr<BertEncoder> encoder_;
  ThreadPool pool_;
  std::vector<float> hidden_;
};

}  // namespace minnow
