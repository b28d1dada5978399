// Chat template rendering: turns a conversation into the prompt text a model
// expects, using the Hugging Face chat template shipped with the model.
#pragma once
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

}  // namespace minnow::chat
