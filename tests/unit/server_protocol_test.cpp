// The server's pure pieces: stop strings across token boundaries, and request validation
// (every bad field gets its OpenAI error: status, type, code, param).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "server/openai_api.hpp"
#include "runtime/stop_matcher.hpp"

using namespace minnow;
using namespace minnow::server;

namespace {

std::string feed(StopMatcher& m, std::initializer_list<const char*> pieces) {
  std::string out;
  for (const char* p : pieces) out += m.push(p);
  return out + m.flush();
}

const std::string kRoot = MINNOW_SOURCE_DIR;

const Model& tiny() {
  static auto m = Model::load(kRoot + "/tests/reference/tiny/gemma3");  // has a chat template (the family default)
  return *m;
}

ApiError parse_error(Endpoint e, const std::string& body, int ctx = 64) {
  try {
    parse_request(e, body, tiny(), "tiny", ctx);
  } catch (const ApiError& err) {
    return err;
  }
  ADD_FAILURE() << "accepted: " << body;
  return ApiError(0, "", "", "", "");
}

}  // namespace

TEST(StopMatcher, CutsAtTheFirstStopAcrossPieces) {
  StopMatcher m({"END", "\n\n"});
  EXPECT_EQ(feed(m, {"hello E", "N", "Dworld"}), "hello ");
  EXPECT_TRUE(m.stopped());
  StopMatcher n({"\n\n"});
  EXPECT_EQ(feed(n, {"a\n", "b\n", "\nc"}), "a\nb");
}

TEST(StopMatcher, HoldsBackOnlyPossibleStarts) {
  StopMatcher m({"<end>"});
  EXPECT_EQ(m.push("abc<e"), "abc");
  EXPECT_EQ(m.push("x"), "<ex");
  EXPECT_EQ(m.push("<"), "");
  EXPECT_EQ(m.flush(), "<");  // generation ended: the held text was not a stop after all
  EXPECT_FALSE(m.stopped());
  StopMatcher none;
  EXPECT_EQ(feed(none, {"a", "b"}), "ab");
}

TEST(OpenAiRequest, AcceptsAFullChatRequest) {
  const auto r = parse_request(Endpoint::Chat, R"({"model":"tiny","messages":[{"role":"system","content":"Be brief."},
      {"role":"user","content":[{"type":"text","text":"Hi"}]}],"temperature":0,"top_p":0.9,"top_k":5,"min_p":0.1,
      "max_completion_tokens":7,"stop":["x","y"],"seed":42,"presence_penalty":0.5,"frequency_penalty":-0.5,
      "stream":true,"stream_options":{"include_usage":true}})",
                               tiny(), "tiny", 64);
  EXPECT_TRUE(r.stream);
  EXPECT_TRUE(r.include_usage);
  EXPECT_EQ(r.completion.max_tokens, 7);
  EXPECT_EQ(r.completion.stop, (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(r.completion.sampling.seed, 42u);
  EXPECT_EQ(r.completion.sampling.top_k, 5);
  EXPECT_FLOAT_EQ(r.completion.sampling.presence_penalty, 0.5f);
  EXPECT_FALSE(r.completion.prompt.empty());
}

TEST(OpenAiRequest, NamesEveryBadField) {
  struct Case {
    const char* body;
    int status;
    const char* code;
    const char* param;
  } cases[] = {
      {"{not json", 400, "invalid_json", ""},
      {"[1,2]", 400, "invalid_json", ""},
      {R"({"messages":[{"role":"user","content":"Hi"}],"temperature":"hot"})", 400, "invalid_value", "temperature"},
      {R"({"messages":[{"role":"user","content":"Hi"}],"temperature":3})", 400, "invalid_value", "temperature"},
      {R"({"messages":[{"role":"user","content":"Hi"}],"max_tokens":-1})", 400, "invalid_value", "max_tokens"},
      {R"({"messages":[{"role":"user","content":"Hi"}],"max_tokens":1.5})", 400, "invalid_value", "max_tokens"},
      {R"({"messages":[{"role":"user","content":"Hi"}],"stop":[1]})", 400, "invalid_value", "stop"},
      {R"({"messages":[{"role":"user","content":"Hi"}],"stop":["a","b","c","d","e"]})", 400, "invalid_value", "stop"},
      {R"({"messages":[{"role":"user","content":"Hi"}],"seed":"x"})", 400, "invalid_value", "seed"},
      {R"({"messages":[{"role":"user","content":"Hi"}],"stream":1})", 400, "invalid_value", "stream"},
      {R"({"messages":[{"role":"user","content":"Hi"}],"n":2})", 400, "invalid_value", "n"},
      {R"({"messages":"Hi"})", 400, "invalid_value", "messages"},
      {R"({"messages":[]})", 400, "invalid_value", "messages"},
      {R"({"messages":[{"role":"wizard","content":"Hi"}]})", 400, "invalid_value", "messages[0].role"},
      {R"({"messages":[{"role":"user","content":5}]})", 400, "invalid_value", "messages[0].content"},
      {R"({"temperature":0})", 400, "missing_field", "messages"},
      {R"({"model":"gpt-4","messages":[{"role":"user","content":"Hi"}]})", 404, "model_not_found", "model"},
  };
  for (const auto& c : cases) {
    const ApiError e = parse_error(Endpoint::Chat, c.body);
    EXPECT_EQ(e.status, c.status) << c.body;
    EXPECT_EQ(e.code, c.code) << c.body;
    EXPECT_EQ(e.param, c.param) << c.body;
    const auto j = nlohmann::json::parse(error_body(e));
    EXPECT_TRUE(j["error"]["message"].is_string()) << c.body;
  }
  EXPECT_EQ(parse_error(Endpoint::Completion, R"({"max_tokens":3})").param, "prompt");
  EXPECT_EQ(parse_error(Endpoint::Completion, R"({"prompt":{"a":1}})").param, "prompt");
  EXPECT_EQ(parse_error(Endpoint::Completion, R"({"prompt":[1, 999999999]})").param, "prompt");
}

TEST(OpenAiRequest, RefusesPromptsLongerThanTheContext) {
  std::string words;
  for (int i = 0; i < 200; ++i) words += "word" + std::to_string(i) + " ";
  const ApiError e = parse_error(Endpoint::Completion, R"({"prompt":")" + words + R"("})", 64);
  EXPECT_EQ(e.code, "context_length_exceeded");
  EXPECT_EQ(e.param, "prompt");
}

TEST(OpenAiResponse, FramesChunksAsOpenAiDoes) {
  const ResponseFormat f(Endpoint::Chat, "tiny");
  const auto first = nlohmann::json::parse(f.first_chunk(true));
  EXPECT_EQ(first["object"], "chat.completion.chunk");
  EXPECT_EQ(first["choices"][0]["delta"]["role"], "assistant");
  EXPECT_TRUE(first["usage"].is_null());
  const auto last = nlohmann::json::parse(f.finish_chunk(Finish::Length, false));
  EXPECT_EQ(last["choices"][0]["finish_reason"], "length");
  EXPECT_FALSE(last.contains("usage"));
  const auto usage = nlohmann::json::parse(f.usage_chunk(3, 4));
  EXPECT_TRUE(usage["choices"].empty());
  EXPECT_EQ(usage["usage"]["total_tokens"], 7);
  const auto full = nlohmann::json::parse(ResponseFormat(Endpoint::Completion, "tiny").full("hi", Finish::Stop, 1, 2));
  EXPECT_EQ(full["object"], "text_completion");
  EXPECT_EQ(full["choices"][0]["text"], "hi");
  EXPECT_EQ(full["choices"][0]["finish_reason"], "stop");
}
