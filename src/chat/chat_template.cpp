#include "chat/chat_template.hpp"

#include <nlohmann/json.hpp>

#include "base/error.hpp"
#include "chat/jinja/json_value.hpp"
#include "chat/jinja/template.hpp"

namespace minnow::chat {

std::string render_chat_template(std::string_view tmpl, const TemplateInputs& in) {
  nlohmann::ordered_json messages = nlohmann::ordered_json::array();
  for (const Message& m : in.messages) messages.push_back({{"role", m.role}, {"content", m.content}});
  const nlohmann::ordered_json variables = {
      {"messages", std::move(messages)},
      {"add_generation_prompt", in.add_generation_prompt},
      {"bos_token", in.bos_token},
      {"eos_token", in.eos_token},
  };
  return render_chat_template(tmpl, variables);
}

std::string render_chat_template(std::string_view tmpl, const nlohmann::ordered_json& variables) {
  if (!variables.is_object()) throw Error("chat template: the variables must be a JSON object");
  // What transformers always passes, whatever the caller gave.
  nlohmann::ordered_json all = {
      {"tools", nullptr},
      {"documents", nullptr},
      {"add_generation_prompt", false},
  };
  for (auto it = variables.begin(); it != variables.end(); ++it) all[it.key()] = it.value();
  // Parse before converting: a syntax error is reported even for bad variables.
  const jinja::Template compiled(tmpl);
  return compiled.render(jinja::value_from_json(all));
}

}  // namespace minnow::chat
