// Chat template engine: any template text, with a conversation that exercises what real
// templates read (tools, tool calls, None content, reasoning), must render or throw
// minnow::Error, within the step and output limits, never crash, hang or leak.
// Input: template text, optionally followed by a NUL byte and a JSON object whose keys
// replace the default variables.
#include <nlohmann/json.hpp>
#include <string_view>

#include "base/error.hpp"
#include "chat/jinja/json_value.hpp"
#include "chat/jinja/template.hpp"
#include "fuzz_target.hpp"

namespace {

const nlohmann::ordered_json& default_variables() {
  static const nlohmann::ordered_json vars = nlohmann::ordered_json::parse(R"({
    "messages": [
      {"role": "system", "content": "Be brief."},
      {"role": "user", "content": "Weather in Zürich? 🙂"},
      {"role": "assistant", "content": null, "reasoning_content": "Need the tool.",
       "tool_calls": [{"id": "c1", "type": "function",
                       "function": {"name": "get_weather", "arguments": {"city": "Zürich", "days": [1, 2.5, null, true]}}},
                      {"id": "c2", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Bern\"}"}}]},
      {"role": "tool", "tool_call_id": "c1", "name": "get_weather", "content": "18"},
      {"role": "tool", "tool_call_id": "c2", "content": ""},
      {"role": "assistant", "content": "<think>\nok\n</think>\n\nIt is 18 °C."},
      {"role": "user", "content": [{"type": "text", "text": "Thanks"}, {"type": "image"}]}
    ],
    "tools": [{"type": "function", "function": {"name": "get_weather", "description": "Weather.",
               "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer", "default": 1}},
                              "required": ["city"]}}}],
    "documents": null, "add_generation_prompt": true, "enable_thinking": false,
    "bos_token": "<s>", "eos_token": "</s>"
  })");
  return vars;
}

}  // namespace

MINNOW_FUZZ_TARGET(template) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t nul = input.find('\0');
  nlohmann::ordered_json vars = default_variables();
  if (nul != std::string_view::npos) {
    const auto extra = nlohmann::ordered_json::parse(input.substr(nul + 1), nullptr, false);
    if (extra.is_object()) {
      for (auto it = extra.begin(); it != extra.end(); ++it) vars[it.key()] = it.value();
    }
  }
  // Small limits keep every input fast; the real ones only scale these bounds up.
  minnow::chat::jinja::RenderLimits limits;
  limits.max_output = 1 << 20;
  limits.max_steps = 200'000;
  try {
    const minnow::chat::jinja::Template tmpl(input.substr(0, nul));
    const std::string out = tmpl.render(minnow::chat::jinja::value_from_json(vars), limits);
    minnow::fuzz::fuzz_check(out.size() <= limits.max_output, "output larger than the limit");
  } catch (const minnow::Error&) {
    // Rejected cleanly.
  }
}
