// minnow::Embedder: the public face of a SentenceEmbedder.
#include "encoder/sentence_embedder.hpp"
#include "minnow/embed.hpp"

namespace minnow {

Embedder::Embedder(std::unique_ptr<SentenceEmbedder> e) : e_(std::move(e)) {}
Embedder::~Embedder() = default;

std::unique_ptr<Embedder> Embedder::load(const std::string& dir, const EmbedderOptions& options) {
  using P = BertEncoder::Precision;
  const P p = options.precision == EmbedderOptions::Precision::F32    ? P::F32
              : options.precision == EmbedderOptions::Precision::Q8_0 ? P::Q8_0
                                                                      : P::BF16;
  return std::unique_ptr<Embedder>(new Embedder(std::make_unique<SentenceEmbedder>(dir, options.n_threads, p)));
}

int Embedder::dim() const { return static_cast<int>(e_->dim()); }
int Embedder::max_tokens() const { return static_cast<int>(e_->config().max_tokens); }
bool Embedder::normalized() const { return e_->config().normalize; }
std::string Embedder::pooling() const { return pooling_name(e_->config().pooling); }

std::vector<int32_t> Embedder::tokenize(std::string_view text) const { return e_->tokenize(text); }

std::vector<float> Embedder::embed(std::span<const std::string> texts, int batch_size, int64_t* n_tokens) {
  std::vector<std::vector<int32_t>> ids;
  ids.reserve(texts.size());
  for (const std::string& t : texts) ids.push_back(e_->tokenize(t));
  return e_->embed(ids, batch_size, n_tokens);
}

std::vector<float> Embedder::embed_tokens(std::span<const std::vector<int32_t>> ids, int batch_size, int64_t* n_tokens) {
  std::vector<std::vector<int32_t>> truncated(ids.begin(), ids.end());
  for (auto& v : truncated) e_->truncate(v);
  return e_->embed(truncated, batch_size, n_tokens);
}

int Embedder::vocab_size() const { return static_cast<int>(e_->vocab_size()); }

}  // namespace minnow
