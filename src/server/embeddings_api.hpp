// /v1/embeddings: the OpenAI request and response shapes over minnow::Embedder.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace minnow::server {

struct EmbeddingRequest {
  std::vector<std::string> texts;           // "input" as text(s)
  std::vector<std::vector<int32_t>> ids;    // or as token arrays
  bool base64 = false;                      // encoding_format "base64": little-endian float32, base64
};

// Parses and validates a body: "input" a string, an array of strings, an array of token
// ids or an array of such arrays (1 to max_inputs items, ids below vocab_size); "dimensions",
// if given, must be the model's; "encoding_format" float or base64; "model", if given, the
// embedding model's id (404 otherwise). Throws ApiError.
EmbeddingRequest parse_embedding_request(std::string_view body, const std::string& model_id, int dim, int vocab_size,
                                         size_t max_inputs = 2048);

// {"object": "list", "data": [{"object": "embedding", "index", "embedding"}...], "model", "usage"}
std::string embedding_response(const std::vector<float>& embeddings, int dim, bool base64, const std::string& model_id,
                               int64_t tokens);

std::string base64_encode(const void* data, size_t n);

}  // namespace minnow::server
