// OpenAI tool calls over models that write them as Hermes-style blocks (Qwen2.5, Qwen3,
// Hermes; their chat templates ask for exactly this):
//   <tool_call>
//   {"name": "get_weather", "arguments": {"city": "Paris"}}
//   </tool_call>
// The reply's text is split into content and calls; a call can be forced with a grammar.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace minnow::server {

struct ToolCall {
  std::string id, name, arguments;  // arguments: a JSON text, as OpenAI sends it
};

struct ToolReply {
  std::string content;  // the text outside the blocks (trimmed)
  std::vector<ToolCall> calls;
};

// Does this chat template take tools and ask for <tool_call> blocks?
bool template_writes_tool_calls(std::string_view chat_template);

// Blocks that are not a JSON object with a string "name" stay in the content. A reply that
// is only such an object, without the tags, with "arguments" and the name of one of
// `tools`, is a call too (small Qwen2.5 models often leave the tags out).
ToolReply split_tool_calls(const std::string& text, const nlohmann::ordered_json& tools);

// Streaming: text passes through until a block may begin (or, at the start, a bare JSON
// object); from there it is held for split_tool_calls at the end.
class ToolCallStream {
 public:
  std::string push(std::string_view text);  // what may be sent now as content
  std::string held() const { return held_; }
  bool holding_call() const { return in_call_; }

 private:
  std::string held_;
  bool in_call_ = false, started_ = false;
};

// A GBNF grammar for one call block to one of `tools` (OpenAI's [{"type": "function",
// "function": {"name", "parameters"}}]), or only to `name` when it is not empty; its
// arguments follow the function's parameters schema. Throws Error naming what is wrong.
std::string forced_tool_call_grammar(const nlohmann::ordered_json& tools, const std::string& name);

// OpenAI's assistant messages carry tool-call arguments as a JSON text; templates expect an
// object (they print it with tojson). Parses them in place where they are valid JSON.
void arguments_as_objects(nlohmann::ordered_json& messages);

}  // namespace minnow::server
