// The turn formats minnow falls back on when a file has no chat template must render
// plain conversations exactly as the family's official template does (golden cases from
// tests/reference/make_template_golden.py, rendered by jinja2).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "chat/chat_template.hpp"
#include "models/family.hpp"

namespace {

void check_fallback(const minnow::FamilySpec& family, const std::string& golden_template) {
  std::ifstream in(std::string(MINNOW_SOURCE_DIR) + "/tests/reference/golden/templates/cases.json");
  const auto doc = nlohmann::ordered_json::parse(in);
  // Conversations of plain string messages (tool calls need the official template).
  const std::set<std::string> plain = {"user_only", "with_system", "multi_turn", "empty_content", "non_ascii", "thinking"};
  int checked = 0;
  for (const auto& c : doc.at("cases")) {
    if (c.at("template") != golden_template || !plain.count(c.at("conversation").get<std::string>()) || !c.contains("expected"))
      continue;
    nlohmann::ordered_json vars = {{"messages", doc.at("conversations").at(c.at("conversation").get<std::string>())},
                                   {"add_generation_prompt", c.at("add_generation_prompt")},
                                   {"bos_token", c.at("bos_token")},
                                   {"eos_token", c.at("eos_token")}};
    EXPECT_EQ(minnow::chat::render_chat_template(family.default_chat_template, vars), c.at("expected").get<std::string>())
        << c.at("conversation") << " add_generation_prompt=" << c.at("add_generation_prompt");
    ++checked;
  }
  EXPECT_GE(checked, 10);
}

}  // namespace

TEST(FamilyTemplates, Gemma3FallbackMatchesOfficialTemplate) { check_fallback(minnow::gemma3_family(), "gemma3"); }
