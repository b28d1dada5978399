// Chat template rendering must match transformers' jinja2 byte for byte: the
// goldens come from tests/reference/make_template_golden.py.
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

nlohmann::json load_goldens() {
  const std::string path = MINNOW_SOURCE_DIR "/tests/reference/golden/templates/cases.json";
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::stringstream buf;
  buf << in.rdbuf();
  return nlohmann::json::parse(buf.str());
}

TemplateInputs inputs_for(const nlohmann::json& golden, const nlohmann::json& c) {
  TemplateInputs in;
  for (const auto& m : golden["conversations"][c["conversation"].get<std::string>()]) {
    in.messages.push_back(Message{m["role"].get<std::string>(), m["content"].get<std::string>()});
  }
  in.add_generation_prompt = c["add_generation_prompt"].get<bool>();
  in.bos_token = c["bos_token"].get<std::string>();
  in.eos_token = c["eos_token"].get<std::string>();
  return in;
}

TEST(ChatTemplateGolden, MatchesJinja2ByteForByte) {
  const nlohmann::json golden = load_goldens();
  const auto& cases = golden["cases"];
  ASSERT_GE(cases.size(), 100u);
  int rendered = 0, errors = 0;
  for (const auto& c : cases) {
    const std::string tname = c["template"].get<std::string>();
    const std::string tmpl = golden["templates"][tname].get<std::string>();
    SCOPED_TRACE(tname + " / " + c["conversation"].get<std::string>() +
                 (c["add_generation_prompt"].get<bool>() ? " / gen" : " / no-gen"));
    const TemplateInputs in = inputs_for(golden, c);
    if (c.contains("expected")) {
      EXPECT_EQ(render_chat_template(tmpl, in), c["expected"].get<std::string>());
      ++rendered;
      continue;
    }
    ++errors;
    const std::string want = c["expected_error"].get<std::string>();
    try {
      render_chat_template(tmpl, in);
      ADD_FAILURE() << "expected an error";
    } catch (const minnow::Error& e) {
      EXPECT_EQ(std::string(e.what()).rfind("template: line ", 0), 0u) << e.what();
      if (!want.empty()) {
        EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
      }
    }
  }
  EXPECT_GT(rendered, 100);
  EXPECT_GT(errors, 0);
}

TEST(ChatTemplateGolden, CoversEveryTemplateAndConversation) {
  const nlohmann::json golden = load_goldens();
  for (const auto& [name, text] : golden["templates"].items()) {
    bool used = false;
    for (const auto& c : golden["cases"]) used = used || c["template"] == name;
    EXPECT_TRUE(used) << name;
  }
  EXPECT_TRUE(golden["templates"].contains("smollm2"));
  EXPECT_TRUE(golden["templates"].contains("chatml"));
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
