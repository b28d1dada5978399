// Chat template rendering: turns a conversation into the prompt text a model
// expects, using the Hugging Face chat template shipped with the model.
#pragma once
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace minnow::chat {

struct Message {
  std::string role;
  std::string content;
};

struct TemplateInputs {
  std::vector<Message> messages;
  bool add_generation_prompt = true;
  std::string bos_token, eos_token;
};

// Renders a Hugging Face chat template (Jinja2 subset) exactly as transformers'
// apply_chat_template does. Throws minnow::Error whose message names the problem
// with line and column, e.g. "template: line 3, column 14: unknown filter 'foo'".
std::string render_chat_template(std::string_view tmpl, const TemplateInputs& in);

// The same with every template variable given as one JSON object, the way an
// OpenAI-style request carries them:
//   {"messages": [...], "tools": [...], "add_generation_prompt": true,
//    "enable_thinking": false, "bos_token": "<s>", "eos_token": "</s>"}
// Values pass through unchanged: content may be null or a list of parts, tool_calls
// arguments an object or a JSON string, and any extra key becomes a variable. As in
// transformers, "tools" and "documents" are None and add_generation_prompt is false
// when absent. ordered_json keeps object key order, which tojson output shows.
// Throws minnow::Error when variables is not an object or the template fails.
std::string render_chat_template(std::string_view tmpl, const nlohmann::ordered_json& variables);

}  // namespace minnow::chat
