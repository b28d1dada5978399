// minnow template: render the model's chat template for a conversation given as JSON,
// to see exactly the prompt the model will be fed (tools, tool calls, thinking flags).
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/common.hpp"

namespace minnow::cli {
namespace {

using Json = nlohmann::ordered_json;  // keeps key order, which tojson output shows

Json read_json_file(const std::string& flag, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(flag + ": cannot read '" + path + "'");
  std::stringstream buf;
  buf << in.rdbuf();
  try {
    return Json::parse(buf.str());
  } catch (const Json::parse_error& e) {
    throw std::runtime_error(flag + ": '" + path + "' is not valid JSON (byte " + std::to_string(e.byte) + ")");
  }
}

// Error messages (raise_exception texts included) must stay on one line.
std::string one_line(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  return s;
}

}  // namespace

void register_template(CLI::App& app) {
  struct Opts {
    std::string model, messages, tools;
    std::vector<std::string> vars;
    bool add_generation_prompt = false;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("template", "Print the prompt the model's chat template makes of a conversation (JSON)");
  cmd->add_option("-m,--model", o->model, "Model file (GGUF); its tokenizer.chat_template and BOS/EOS texts are used")
      ->required()
      ->type_name("FILE");
  cmd->add_option("--messages", o->messages,
                  "JSON file: a list of OpenAI-style messages, or a request object with \"messages\" (and \"tools\")")
      ->required()
      ->type_name("FILE");
  cmd->add_flag("--add-generation-prompt", o->add_generation_prompt, "End with the header of the assistant's turn");
  cmd->add_option("--tools", o->tools, "JSON file: a list of OpenAI function schemas (tools is None without it)")
      ->type_name("FILE");
  cmd->add_option("--var", o->vars, "NAME=JSON: one more template variable, e.g. --var enable_thinking=false (repeatable)")
      ->type_name("NAME=JSON")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->footer(
      "The prompt is printed as is, with no newline added. Example:\n"
      "  echo '[{\"role\": \"user\", \"content\": \"Hi!\"}]' > /tmp/m.json\n"
      "  minnow template -m models/SmolLM2-135M-Instruct.Q4_1.gguf --messages /tmp/m.json --add-generation-prompt");
  cmd->callback([o] {
    Json vars = Json::object();
    Json messages = read_json_file("--messages", o->messages);
    if (messages.is_object()) {  // a whole chat-completions request
      if (messages.contains("tools")) vars["tools"] = messages["tools"];
      messages = Json(messages.value("messages", Json()));
    }
    if (!messages.is_array()) throw std::runtime_error("--messages: '" + o->messages + "' must hold a JSON list of messages");
    vars["messages"] = std::move(messages);
    if (!o->tools.empty()) {
      Json tools = read_json_file("--tools", o->tools);
      if (!tools.is_array()) throw std::runtime_error("--tools: '" + o->tools + "' must hold a JSON list of tools");
      vars["tools"] = std::move(tools);
    }
    vars["add_generation_prompt"] = o->add_generation_prompt;
    for (const std::string& v : o->vars) {
      const auto eq = v.find('=');
      if (eq == std::string::npos || eq == 0) throw std::runtime_error("--var '" + v + "': expected NAME=JSON");
      const Json value = Json::parse(v.substr(eq + 1), nullptr, false);
      if (value.is_discarded()) throw std::runtime_error("--var '" + v + "': the value is not valid JSON (strings need quotes)");
      vars[v.substr(0, eq)] = value;
    }
    auto model = load_model_or_throw(o->model);
    std::string prompt;
    try {
      prompt = model->apply_chat_template_json(vars.dump());
    } catch (const std::exception& e) {
      throw std::runtime_error(one_line(e.what()));
    }
    std::fwrite(prompt.data(), 1, prompt.size(), stdout);
    std::fflush(stdout);
  });
}

}  // namespace minnow::cli
