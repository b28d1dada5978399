// Tool calls out of a reply's text (blocks and bare objects), streamed, and forced by a grammar.
#include <gtest/gtest.h>

#include "grammar_match.hpp"
#include "grammar/gbnf.hpp"
#include "grammar/matcher.hpp"
#include "minnow/error.hpp"
#include "server/tool_calls.hpp"

namespace minnow::server {
namespace {

using json = nlohmann::ordered_json;
const json kTools = json::parse(R"([{"type": "function", "function": {"name": "get_weather",
  "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}},
  {"type": "function", "function": {"name": "now"}}])");

TEST(ToolCalls, SplitsBlocksFromContent) {
  const ToolReply r = split_tool_calls(
      "Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>\n"
      "<tool_call>\n{\"name\": \"now\", \"arguments\": {}}\n</tool_call>",
      kTools);
  ASSERT_EQ(r.calls.size(), 2u);
  EXPECT_EQ(r.content, "Let me check.");
  EXPECT_EQ(r.calls[0].name, "get_weather");
  EXPECT_EQ(r.calls[0].arguments, R"({"city":"Paris"})");
  EXPECT_EQ(r.calls[1].name, "now");
  EXPECT_NE(r.calls[0].id, r.calls[1].id);
  EXPECT_EQ(r.calls[0].id.rfind("call_", 0), 0u);
}

TEST(ToolCalls, TextThatIsNoCallStaysContent) {
  EXPECT_TRUE(split_tool_calls("<tool_call>\nnot json\n</tool_call> ok", kTools).calls.empty());
  EXPECT_EQ(split_tool_calls("<tool_call>\nnot json\n</tool_call> ok", kTools).content, "<tool_call>\nnot json\n</tool_call> ok");
  EXPECT_TRUE(split_tool_calls(R"({"name": "unknown", "arguments": {}})", kTools).calls.empty());  // not a tool
  EXPECT_TRUE(split_tool_calls(R"({"name": "now"})", kTools).calls.empty());  // bare, no arguments: data, not a call
  const ToolReply bare = split_tool_calls(R"( {"name": "now", "arguments": {}} )", kTools);
  ASSERT_EQ(bare.calls.size(), 1u);
  EXPECT_EQ(bare.content, "");
}

TEST(ToolCalls, StreamHoldsFromTheBlockOn) {
  ToolCallStream s;
  std::string sent;
  for (const char* piece : {"Sure", ", <tool", "_ca", "ll>\n{\"name\": \"now\", ", "\"arguments\": {}}\n</tool_call>"}) sent += s.push(piece);
  EXPECT_EQ(sent, "Sure, ");
  EXPECT_TRUE(s.holding_call());
  EXPECT_EQ(split_tool_calls(s.held(), kTools).calls.size(), 1u);
  ToolCallStream t;  // "<" that turns out not to open a block is sent
  EXPECT_EQ(t.push("a <to"), "a ");  // "<to" may open a block: held
  EXPECT_EQ(t.push("p>"), "<top>");  // it did not: sent
  ToolCallStream bare;  // a reply opening with '{' is held whole
  EXPECT_EQ(bare.push("  {\"name\""), "");
  EXPECT_TRUE(bare.holding_call());
}

bool matches(const std::string& gbnf, const std::string& text) { return test::grammar_matches(gbnf, text); }

TEST(ToolCalls, ForcedGrammarHoldsArgumentsToTheSchema) {
  const std::string any = forced_tool_call_grammar(kTools, "");
  EXPECT_TRUE(matches(any, "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>"));
  EXPECT_TRUE(matches(any, "<tool_call>\n{\"name\": \"now\", \"arguments\": {}}\n</tool_call>"));
  EXPECT_FALSE(matches(any, "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {}}\n</tool_call>"));  // city is required
  EXPECT_FALSE(matches(any, "<tool_call>\n{\"name\": \"other\", \"arguments\": {}}\n</tool_call>"));
  const std::string one = forced_tool_call_grammar(kTools, "now");
  EXPECT_FALSE(matches(one, "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>"));
  EXPECT_THROW(forced_tool_call_grammar(kTools, "missing"), Error);
  EXPECT_THROW(forced_tool_call_grammar(json::array(), ""), Error);
  EXPECT_THROW(forced_tool_call_grammar(json::parse(R"([{"type": "function"}])"), ""), Error);
}

TEST(ToolCalls, ArgumentTextsBecomeObjectsForTheTemplate) {
  json messages = json::parse(R"([{"role": "assistant", "content": null, "tool_calls": [
    {"id": "call_1", "type": "function", "function": {"name": "now", "arguments": "{\"tz\": \"UTC\"}"}},
    {"id": "call_2", "type": "function", "function": {"name": "now", "arguments": "not json"}}]}])");
  arguments_as_objects(messages);
  EXPECT_EQ(messages[0]["tool_calls"][0]["function"]["arguments"], json::parse(R"({"tz": "UTC"})"));
  EXPECT_EQ(messages[0]["tool_calls"][1]["function"]["arguments"], "not json");
}

}  // namespace
}  // namespace minnow::server
