#include "server/embeddings_api.hpp"

#include <cstring>
#include <nlohmann/json.hpp>

#include "server/openai_api.hpp"

namespace minnow::server {

using nlohmann::json;

std::string base64_encode(const void* data, size_t n) {
  static constexpr char kDigits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const auto* p = static_cast<const uint8_t*>(data);
  std::string out;
  out.reserve((n + 2) / 3 * 4);
  for (size_t i = 0; i < n; i += 3) {
    const uint32_t v = (uint32_t{p[i]} << 16) | (i + 1 < n ? uint32_t{p[i + 1]} << 8 : 0) | (i + 2 < n ? p[i + 2] : 0);
    out += kDigits[v >> 18];
    out += kDigits[(v >> 12) & 63];
    out += i + 1 < n ? kDigits[(v >> 6) & 63] : '=';
    out += i + 2 < n ? kDigits[v & 63] : '=';
  }
  return out;
}

namespace {

std::vector<int32_t> token_array(const json& a, int vocab_size) {
  std::vector<int32_t> ids;
  for (const json& v : a) {
    if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() >= vocab_size)
      throw invalid_request("input", "invalid_value",
                            "'input' token ids must be integers from 0 to " + std::to_string(vocab_size - 1));
    ids.push_back(v.get<int32_t>());
  }
  if (ids.empty()) throw invalid_request("input", "invalid_value", "'input' holds an empty token array");
  return ids;
}

}  // namespace

EmbeddingRequest parse_embedding_request(std::string_view body, const std::string& model_id, int dim, int vocab_size,
                                         size_t max_inputs) {
  const json j = json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw invalid_request("", "invalid_json", "the request body is not a JSON object");
  if (j.contains("model") && !j.at("model").is_null()) {
    if (!j.at("model").is_string()) throw invalid_request("model", "invalid_value", "'model' must be a string");
    if (j.at("model") != model_id)
      throw ApiError(404, "invalid_request_error", "model_not_found", "model",
                     "the model '" + j.at("model").get<std::string>() + "' does not exist; this server's embedding model is '" +
                         model_id + "'");
  }
  EmbeddingRequest r;
  if (!j.contains("input")) throw invalid_request("input", "missing_required_parameter", "'input' is required");
  const json& in = j.at("input");
  if (in.is_string()) {
    r.texts.push_back(in.get<std::string>());
  } else if (in.is_array() && !in.empty()) {
    if (in.size() > max_inputs)
      throw invalid_request("input", "invalid_value", "'input' holds " + std::to_string(in.size()) + " items; at most " +
                                                          std::to_string(max_inputs) + " per request");
    if (in[0].is_string()) {
      for (const json& t : in) {
        if (!t.is_string()) throw invalid_request("input", "invalid_type", "'input' mixes strings with other values");
        r.texts.push_back(t.get<std::string>());
      }
    } else if (in[0].is_number()) {
      r.ids.push_back(token_array(in, vocab_size));
    } else if (in[0].is_array()) {
      for (const json& a : in) {
        if (!a.is_array()) throw invalid_request("input", "invalid_type", "'input' mixes token arrays with other values");
        r.ids.push_back(token_array(a, vocab_size));
      }
    } else {
      throw invalid_request("input", "invalid_type", "'input' must be a string, strings, token ids or token id arrays");
    }
  } else {
    throw invalid_request("input", "invalid_type", "'input' must be a string or a non-empty array");
  }
  if (j.contains("encoding_format") && !j.at("encoding_format").is_null()) {
    const json& f = j.at("encoding_format");
    if (f == "base64") r.base64 = true;
    else if (f != "float") throw invalid_request("encoding_format", "invalid_value", "'encoding_format' must be 'float' or 'base64'");
  }
  if (j.contains("dimensions") && !j.at("dimensions").is_null() &&
      (!j.at("dimensions").is_number_integer() || j.at("dimensions").get<int64_t>() != dim))
    throw invalid_request("dimensions", "invalid_value",
                          "'dimensions' must be " + std::to_string(dim) + ", this model's (it cannot shorten embeddings)");
  return r;
}

std::string embedding_response(const std::vector<float>& embeddings, int dim, bool base64, const std::string& model_id,
                               int64_t tokens) {
  const size_t n = embeddings.size() / static_cast<size_t>(dim);
  nlohmann::ordered_json data = nlohmann::ordered_json::array();
  for (size_t i = 0; i < n; ++i) {
    const float* v = embeddings.data() + i * static_cast<size_t>(dim);
    nlohmann::ordered_json item = {{"object", "embedding"}, {"index", i}};
    if (base64) item["embedding"] = base64_encode(v, static_cast<size_t>(dim) * sizeof(float));  // x86/ARM: little-endian
    else item["embedding"] = std::vector<float>(v, v + dim);
    data.push_back(std::move(item));
  }
  nlohmann::ordered_json out = {{"object", "list"}, {"data", std::move(data)}, {"model", model_id},
                                {"usage", {{"prompt_tokens", tokens}, {"total_tokens", tokens}}}};
  return out.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace minnow::server
