// The OpenAI wire format: request bodies in (validated field by field, turned into token
// ids and sampling options), response bodies and server-sent-event chunks out.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "minnow/llm.hpp"
#include "server/engine.hpp"
#include "server/tool_calls.hpp"

namespace minnow::server {

// An error the client caused (or a busy server), as OpenAI reports it.
struct ApiError : std::runtime_error {
  ApiError(int status, std::string type, std::string code, std::string param, const std::string& message)
      : std::runtime_error(message), status(status), type(std::move(type)), code(std::move(code)), param(std::move(param)) {}
  int status;
  std::string type, code, param;  // param/code empty: null
};

// {"error": {"message", "type", "param", "code"}}
std::string error_body(const ApiError& e);
ApiError invalid_request(const std::string& param, const std::string& code, const std::string& message);

enum class Endpoint { Chat, Completion };

struct ParsedRequest {
  CompletionRequest completion;
  bool stream = false, include_usage = false;
  bool tool_calls = false;  // the reply may hold tool calls (tools below): sent as tool_calls
  nlohmann::ordered_json tools;
};

// Parses and validates a /v1/chat/completions or /v1/completions body; renders the chat
// template and tokenizes. Throws ApiError.
ParsedRequest parse_request(Endpoint e, std::string_view body, const Model& model, const std::string& model_id,
                            int ctx);

// Builds the response objects of one request.
class ResponseFormat {
 public:
  ResponseFormat(Endpoint e, std::string model_id);
  const std::string& id() const { return id_; }

  // With tools, the text's tool calls become message.tool_calls.
  std::string full(const std::string& text, Finish f, int prompt_tokens, int completion_tokens,
                   const nlohmann::ordered_json* tools = nullptr) const;
  // Streaming: the first chunk (chat: the assistant role), text deltas, the finish chunk,
  // the usage chunk (stream_options.include_usage). `usage_null` adds "usage": null.
  std::string first_chunk(bool usage_null) const;
  std::string text_chunk(const std::string& text, bool usage_null) const;
  std::string tool_calls_chunk(const std::vector<ToolCall>& calls, bool usage_null) const;
  std::string finish_chunk(Finish f, bool usage_null, bool tool_calls = false) const;
  std::string usage_chunk(int prompt_tokens, int completion_tokens) const;

 private:
  Endpoint e_;
  std::string id_, model_;
  int64_t created_;
};

}  // namespace minnow::server
