#include "chat/chat_template.hpp"

#include "chat/jinja/template.hpp"

namespace minnow::chat {

std::string render_chat_template(std::string_view tmpl, const TemplateInputs& in) {
  using jinja::Value;
  std::vector<Value> messages;
  messages.reserve(in.messages.size());
  for (const Message& m : in.messages) {
    messages.push_back(Value::dict({{"role", Value(m.role)}, {"content", Value(m.content)}}));
  }
  // The variables transformers passes: tools and documents are None when absent.
  const Value context = Value::dict({
      {"messages", Value::list(std::move(messages))},
      {"add_generation_prompt", Value(in.add_generation_prompt)},
      {"bos_token", Value(in.bos_token)},
      {"eos_token", Value(in.eos_token)},
      {"tools", Value(jinja::None{})},
      {"documents", Value(jinja::None{})},
  });
  return jinja::Template(tmpl).render(context);
}

}  // namespace minnow::chat
