// Chat template rendering must match transformers' jinja2 byte for byte: the
// goldens come from tests/reference/make_template_golden.py.
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/error.hpp"
#include "chat/chat_template.hpp"

namespace {

using minnow::chat::Message;
using minnow::chat::render_chat_template;
using minnow::chat::TemplateInputs;

// ordered_json: tool schemas keep their key order, which tojson output shows.
nlohmann::ordered_json load_goldens() {
  const std::string path = MINNOW_SOURCE_DIR "/tests/reference/golden/templates/cases.json";
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::stringstream buf;
  buf << in.rdbuf();
  return nlohmann::ordered_json::parse(buf.str());
}

// What the golden script passed to jinja2's render(), as one JSON object.
nlohmann::ordered_json variables_for(const nlohmann::ordered_json& golden, const nlohmann::ordered_json& c) {
  nlohmann::ordered_json v = {
      {"messages", golden["conversations"][c["conversation"].get<std::string>()]},
      {"add_generation_prompt", c["add_generation_prompt"]},
      {"bos_token", c["bos_token"]},
      {"eos_token", c["eos_token"]},
  };
  if (c.contains("tools")) v["tools"] = golden["tools"][c["tools"].get<std::string>()];
  if (c.contains("vars")) {
    for (const auto& [k, x] : c["vars"].items()) v[k] = x;
  }
  return v;
}

// The simple Message path applies when every message is just a string role and content.
bool simple_inputs(const nlohmann::ordered_json& c, const nlohmann::ordered_json& vars, TemplateInputs& in) {
  if (c.contains("tools") || c.contains("vars")) return false;
  for (const auto& m : vars["messages"]) {
    if (m.size() != 2 || !m.contains("role") || !m.contains("content") || !m["content"].is_string()) return false;
    in.messages.push_back(Message{m["role"].get<std::string>(), m["content"].get<std::string>()});
  }
  in.add_generation_prompt = c["add_generation_prompt"].get<bool>();
  in.bos_token = c["bos_token"].get<std::string>();
  in.eos_token = c["eos_token"].get<std::string>();
  return true;
}

// Runs one case through the given renderer; returns whether it expected an error.
template <typename Render>
bool check_case(const nlohmann::ordered_json& c, Render render) {
  if (c.contains("expected")) {
    EXPECT_EQ(render(), c["expected"].get<std::string>());
    return false;
  }
  const std::string want = c["expected_error"].get<std::string>();
  try {
    render();
    ADD_FAILURE() << "expected an error";
  } catch (const minnow::Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("template: line ", 0), 0u) << e.what();
    if (!want.empty()) {
      EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
    }
  }
  return true;
}

TEST(ChatTemplateGolden, MatchesJinja2ByteForByte) {
  const nlohmann::ordered_json golden = load_goldens();
  const auto& cases = golden["cases"];
  ASSERT_GE(cases.size(), 400u);
  int rendered = 0, errors = 0, simple = 0, with_tools = 0;
  for (const auto& c : cases) {
    const std::string tname = c["template"].get<std::string>();
    const std::string tmpl = golden["templates"][tname].get<std::string>();
    const nlohmann::ordered_json vars = variables_for(golden, c);
    SCOPED_TRACE(tname + " / " + c["conversation"].get<std::string>() +
                 (c.contains("tools") ? " / tools" : "") + (c.contains("vars") ? " / " + c["vars"].dump() : "") +
                 (c["add_generation_prompt"].get<bool>() ? " / gen" : " / no-gen"));
    const bool error = check_case(c, [&] { return render_chat_template(tmpl, vars); });
    ++(error ? errors : rendered);
    with_tools += c.contains("tools");
    TemplateInputs in;
    if (simple_inputs(c, vars, in)) {
      check_case(c, [&] { return render_chat_template(tmpl, in); });
      ++simple;
    }
  }
  EXPECT_GT(rendered, 300);
  EXPECT_GT(errors, 0);
  EXPECT_GT(simple, 100);
  EXPECT_GT(with_tools, 50);
  std::printf("[   INFO   ] %d golden cases: %d rendered, %d errors, %d also through the Message path\n",
              rendered + errors, rendered, errors, simple);
}

TEST(ChatTemplateGolden, CoversEveryTemplateAndConversation) {
  const nlohmann::ordered_json golden = load_goldens();
  for (const auto& [name, text] : golden["templates"].items()) {
    bool used = false;
    for (const auto& c : golden["cases"]) used = used || c["template"] == name;
    EXPECT_TRUE(used) << name;
  }
  for (const char* key : {"conversations", "tools"}) {
    const std::string field = std::string(key) == "tools" ? "tools" : "conversation";
    for (const auto& [name, value] : golden[key].items()) {
      bool used = false;
      for (const auto& c : golden["cases"]) used = used || (c.contains(field) && c[field] == name);
      EXPECT_TRUE(used) << key << ": " << name;
    }
  }
  for (const char* name : {"smollm2", "chatml", "qwen3", "llama3", "gemma3", "openai_tools"}) {
    EXPECT_TRUE(golden["templates"].contains(name)) << name;
  }
}

TEST(ChatTemplate, SmolLM2DefaultSystemPrompt) {
  const std::string tmpl =
      "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
      "{{ '<|im_start|>system\nYou are SmolLM<|im_end|>\n' }}{% endif %}"
      "{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}"
      "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";
  TemplateInputs in;
  in.messages = {{"user", "Hi"}};
  EXPECT_EQ(render_chat_template(tmpl, in),
            "<|im_start|>system\nYou are SmolLM<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
  in.add_generation_prompt = false;
  in.messages = {{"system", "S"}, {"user", "Hi"}};
  EXPECT_EQ(render_chat_template(tmpl, in), "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n");
}

TEST(ChatTemplate, SpecialTokensAndTransformersVariables) {
  TemplateInputs in;
  in.bos_token = "<s>";
  in.eos_token = "</s>";
  EXPECT_EQ(render_chat_template("{{ bos_token }}x{{ eos_token }}", in), "<s>x</s>");
  // transformers passes tools=None and documents=None when there are none.
  EXPECT_EQ(render_chat_template("{{ tools is none }} {{ documents is defined }} {{ other is defined }}", in),
            "True True False");
}

TEST(ChatTemplate, TrimBlocksAndLstripBlocks) {
  TemplateInputs in;
  in.messages = {{"user", "a"}, {"assistant", "b"}};
  const std::string tmpl =
      "{% for m in messages %}\n"
      "    {% if m.role == 'user' %}\n"
      "U:{{ m.content }}\n"
      "    {% else %}\n"
      "A:{{ m.content }}\n"
      "    {% endif %}\n"
      "{% endfor %}\n";
  EXPECT_EQ(render_chat_template(tmpl, in), "U:a\nA:b\n");
}

}  // namespace
