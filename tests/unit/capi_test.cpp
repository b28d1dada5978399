// The C API (include/minnow/minnow.h): every function, its results against the C++ API,
// and every bad argument returning a status and a message (never a crash). The tiny
// Qwen2 GGUF keeps it fast; the real SmolLM2 file gives a chat template.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "minnow/embed.hpp"
#include "minnow/llm.hpp"
#include "minnow/minnow.h"
#include "vulkan_device.hpp"

namespace {

const std::string kRoot = MINNOW_SOURCE_DIR;
const std::string kTiny = kRoot + "/tests/reference/tiny/qwen2.gguf";
const std::string kSmol = kRoot + "/models/SmolLM2-135M-Instruct.Q4_1.gguf";

struct CModel {
  minnow_model* m = nullptr;
  explicit CModel(const std::string& path, const minnow_model_params* p = nullptr) {
    EXPECT_EQ(minnow_model_load(path.c_str(), p, &m), MINNOW_OK) << minnow_last_error();
  }
  ~CModel() { minnow_model_free(m); }
};

struct CSession {
  minnow_session* s = nullptr;
  explicit CSession(minnow_model* m, const minnow_session_params* p = nullptr) {
    EXPECT_EQ(minnow_session_create(m, p, &s), MINNOW_OK) << minnow_last_error();
  }
  ~CSession() { minnow_session_free(s); }
};

// Collects what the callback receives.
struct Stream {
  std::string text;
  std::vector<int32_t> ids;
  int stop_after = -1;  // return false after this many tokens
  static bool callback(const char* piece, size_t len, int32_t id, void* user) {
    auto* s = static_cast<Stream*>(user);
    s->text.append(piece, len);
    if (id >= 0) s->ids.push_back(id);
    return s->stop_after < 0 || static_cast<int>(s->ids.size()) < s->stop_after;
  }
};

minnow_generate_params greedy(int n) {
  minnow_generate_params p = minnow_generate_params_default();
  p.max_tokens = n;
  p.temperature = 0;
  p.stop_at_end_of_generation = false;
  return p;
}

// The C++ API's greedy continuation of prompt, for comparison.
std::vector<int32_t> cpp_greedy(const std::string& path, const std::vector<int32_t>& prompt, int n) {
  auto model = minnow::Model::load(path);
  minnow::Session s(*model);
  minnow::GenerateOptions o;
  o.max_tokens = n;
  o.sampling.temperature = 0;
  o.stop_at_end_of_generation = false;
  std::vector<int32_t> ids;
  s.generate(prompt, o, [&](std::string_view, int32_t id) {
    if (id >= 0) ids.push_back(id);
    return true;
  });
  return ids;
}

std::vector<int32_t> tokenize(minnow_model* m, const std::string& text) {
  size_t n = 0;
  EXPECT_EQ(minnow_tokenize(m, text.data(), text.size(), true, nullptr, 0, &n), MINNOW_ERR_BUFFER_TOO_SMALL);
  std::vector<int32_t> ids(n);
  EXPECT_EQ(minnow_tokenize(m, text.data(), text.size(), true, ids.data(), ids.size(), &n), MINNOW_OK);
  EXPECT_EQ(n, ids.size());
  return ids;
}

TEST(CApi, VersionAndStatusNames) {
  EXPECT_EQ(minnow_abi_version(), MINNOW_ABI_VERSION);
  EXPECT_STREQ(minnow_version(), "0.1.0");
  EXPECT_STREQ(minnow_status_name(MINNOW_OK), "MINNOW_OK");
  EXPECT_STREQ(minnow_status_name(MINNOW_ERR_LOAD), "MINNOW_ERR_LOAD");
  EXPECT_STREQ(minnow_status_name(MINNOW_ERR_INTERNAL), "MINNOW_ERR_INTERNAL");
  EXPECT_STREQ(minnow_status_name(999), "MINNOW_ERR_UNKNOWN");
}

TEST(CApi, LoadRefusesBadArgumentsAndFiles) {
  minnow_model* m = reinterpret_cast<minnow_model*>(0x1);
  EXPECT_EQ(minnow_model_load(nullptr, nullptr, &m), MINNOW_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(m, nullptr);
  EXPECT_EQ(minnow_model_load(kTiny.c_str(), nullptr, nullptr), MINNOW_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(minnow_last_error()).find("out is NULL"), std::string::npos);

  EXPECT_EQ(minnow_model_load("/no/such/model.gguf", nullptr, &m), MINNOW_ERR_LOAD);
  EXPECT_NE(std::string(minnow_last_error()).find("/no/such/model.gguf"), std::string::npos) << minnow_last_error();

  const std::string bad = testing::TempDir() + "capi_truncated.gguf";
  std::ofstream(bad, std::ios::binary) << "GGUF\x03\x00\x00\x00\xff\xff";
  EXPECT_EQ(minnow_model_load(bad.c_str(), nullptr, &m), MINNOW_ERR_LOAD);
  EXPECT_GT(std::string(minnow_last_error()).size(), 0u);
  std::filesystem::remove(bad);

  minnow_model_params p = minnow_model_params_default();
  p.n_threads = -1;
  EXPECT_EQ(minnow_model_load(kTiny.c_str(), &p, &m), MINNOW_ERR_INVALID_ARGUMENT);
  p = minnow_model_params_default();
  p.n_ctx = -5;
  EXPECT_EQ(minnow_model_load(kTiny.c_str(), &p, &m), MINNOW_ERR_INVALID_ARGUMENT);
  p = minnow_model_params_default();
  p.kv_type = 42;
  EXPECT_EQ(minnow_model_load(kTiny.c_str(), &p, &m), MINNOW_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(minnow_last_error()).find("kv_type"), std::string::npos);
  p = minnow_model_params_default();
  p.backend = 7;
  EXPECT_EQ(minnow_model_load(kTiny.c_str(), &p, &m), MINNOW_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(minnow_last_error()).find("backend"), std::string::npos);
  p = minnow_model_params_default();
  p.device = -1;
  EXPECT_EQ(minnow_model_load(kTiny.c_str(), &p, &m), MINNOW_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(m, nullptr);
}

TEST(CApi, FreedAndForeignHandlesAreRefused) {
  minnow_model* m = nullptr;
  ASSERT_EQ(minnow_model_load(kTiny.c_str(), nullptr, &m), MINNOW_OK);
  minnow_model_free(m);
  minnow_model_free(m);        // a second free is detected and ignored
  minnow_model_free(nullptr);  // accepted
  minnow_model_info info;
  EXPECT_EQ(minnow_model_get_info(m, &info), MINNOW_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(minnow_last_error()).find("not a live handle"), std::string::npos);
  int dummy = 0;
  auto* foreign = reinterpret_cast<minnow_model*>(&dummy);
  EXPECT_EQ(minnow_model_get_info(foreign, &info), MINNOW_ERR_INVALID_ARGUMENT);
  minnow_session* s = nullptr;
  EXPECT_EQ(minnow_session_create(foreign, nullptr, &s), MINNOW_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(s, nullptr);
  EXPECT_FALSE(minnow_token_is_end_of_generation(foreign, 2));
  auto* fs = reinterpret_cast<minnow_session*>(&dummy);
  EXPECT_EQ(minnow_session_n_past(fs), -1);
  EXPECT_EQ(minnow_session_n_ctx(nullptr), -1);
  EXPECT_EQ(minnow_session_reset(fs), MINNOW_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(minnow_session_cancel(nullptr), MINNOW_ERR_INVALID_ARGUMENT);
  minnow_session_free(fs);  // ignored
}

TEST(CApi, ModelInfoMatchesTheCppApi) {
  CModel c(kTiny);
  auto cpp = minnow::Model::load(kTiny);
  minnow_model_info i;
  ASSERT_EQ(minnow_model_get_info(c.m, &i), MINNOW_OK);
  EXPECT_EQ(std::string(i.architecture), cpp->info().architecture);
  EXPECT_EQ(i.n_layers, cpp->info().n_layers);
  EXPECT_EQ(i.d_model, cpp->info().d_model);
  EXPECT_EQ(i.vocab_size, cpp->info().vocab_size);
  EXPECT_EQ(i.context_length, cpp->info().context_length);
  EXPECT_EQ(i.n_params, cpp->info().n_params);
  EXPECT_EQ(i.bos_id, cpp->bos_id());
  EXPECT_EQ(i.eos_id, cpp->eos_id());
  EXPECT_FALSE(i.has_chat_template);
  EXPECT_TRUE(minnow_token_is_end_of_generation(c.m, i.eos_id));
  EXPECT_FALSE(minnow_token_is_end_of_generation(c.m, -1));
  EXPECT_FALSE(minnow_token_is_end_of_generation(c.m, i.vocab_size));
  EXPECT_EQ(minnow_model_get_info(c.m, nullptr), MINNOW_ERR_INVALID_ARGUMENT);
}

TEST(CApi, TokenizeAndDetokenize) {
  CModel c(kTiny);
  auto cpp = minnow::Model::load(kTiny);
  const std::string text = "Hello world, ünïcødé!";
  EXPECT_EQ(tokenize(c.m, text), cpp->tokenize(text));
  const std::vector<int32_t> ids = cpp->tokenize(text, false);

  size_t n = 0;
  std::vector<int32_t> small(1);
  EXPECT_EQ(minnow_tokenize(c.m, text.data(), text.size(), false, small.data(), 1, &n), MINNOW_ERR_BUFFER_TOO_SMALL);
  EXPECT_EQ(n, ids.size());
  EXPECT_EQ(minnow_tokenize(c.m, nullptr, 3, true, nullptr, 0, &n), MINNOW_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(minnow_tokenize(c.m, text.data(), text.size(), true, nullptr, 0, nullptr), MINNOW_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(minnow_tokenize(c.m, text.data(), text.size(), true, nullptr, 8, &n), MINNOW_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(minnow_tokenize(nullptr, text.data(), text.size(), true, nullptr, 0, &n), MINNOW_ERR_INVALID_ARGUMENT);
  EXPECT_NE(minnow_tokenize(c.m, nullptr, 0, true, nullptr, 0, &n), MINNOW_ERR_INVALID_ARGUMENT);  // empty text is fine

  const std::string want = cpp->detokenize(ids);
  EXPECT_EQ(minnow_detokenize(c.m, ids.data(), ids.size(), false, nullptr, 0, &n), MINNOW_ERR_BUFFER_TOO_SMALL);
  EXPECT_EQ(n, want.size());
  std::vector<char> buf(n + 1, 'x');
  ASSERT_EQ(minnow_detokenize(c.m, ids.data(), ids.size(), false, buf.data(), buf.size(), &n), MINNOW_OK);
  EXPECT_EQ(std::string(buf.data()), want);  // NUL-terminated when there is room
  std::vector<char> exact(want.size());
  EXPECT_EQ(minnow_detokenize(c.m, ids.data(), ids.size(), false, exact.data(), exact.size(), &n), MINNOW_OK);
  EXPECT_EQ(std::string(exact.data(), n), want);

  const int32_t bad[] = {1, 100000};
  EXPECT_EQ(minnow_detokenize(c.m, bad, 2, false, buf.data(), buf.size(), &n), MINNOW_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(minnow_last_error()).find("100000"), std::string::npos);
  const int32_t negative[] = {-3};
  EXPECT_EQ(minnow_detokenize(c.m, negative, 1, false, buf.data(), buf.size(), &n), MINNOW_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(minnow_detokenize(c.m, nullptr, 2, false, buf.data(), buf.size(), &n), MINNOW_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(minnow_detokenize(c.m, ids.data(), ids.size(), false, buf.data(), buf.size(), nullptr), MINNOW_ERR_INVALID_ARGUMENT);
}

TEST(CApi, ChatTemplates) {
  CModel tiny(kTiny);
  const minnow_chat_message msgs[] = {{"system", "You are brief."}, {"user", "Hi!"}};
  size_t n = 0;
  EXPECT_EQ(minnow_chat_apply(tiny.m, msgs, 2, true, nullptr, 0, &n), MINNOW_ERR_NO_TEMPLATE);

  CModel c(kSmol);
  auto cpp = minnow::Model::load(kSmol);
  const std::string want = cpp->apply_chat_template({{"system", "You are brief."}, {"user", "Hi!"}}, true);
  EXPECT_EQ(minnow_chat_apply(c.m, msgs, 2, true, nullptr, 0, &n), MINNOW_ERR_BUFFER_TOO_SMALL);
  std::string got(n, '\0');
  ASSERT_EQ(minnow_chat_apply(c.m, msgs, 2, true, got.data(), got.size(), &n), MINNOW_OK);
  EXPECT_EQ(got, want);

  const char* json = R"({"messages": [{"role": "system", "content": "You are brief."}, {"role": "user", "content": "Hi!"}],
                         "add_generation_prompt": true})";
  std::vector<char> buf(4096);
  ASSERT_EQ(minnow_chat_apply_json(c.m, json, buf.data(), buf.size(), &n), MINNOW_OK) << minnow_last_error();
  EXPECT_EQ(std::string(buf.data(), n), want);

  EXPECT_EQ(minnow_chat_apply_json(c.m, "{not json", buf.data(), buf.size(), &n), MINNOW_ERR_TEMPLATE);
  EXPECT_NE(std::string(minnow_last_error()).find("JSON"), std::string::npos);
  EXPECT_EQ(minnow_chat_apply_json(c.m, nullptr, buf.data(), buf.size(), &n), MINNOW_ERR_INVALID_ARGUMENT);
  const minnow_chat_message null_role[] = {{nullptr, "x"}};
  EXPECT_EQ(minnow_chat_apply(c.m, null_role, 1, true, buf.data(), buf.size(), &n), MINNOW_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(minnow_last_error()).find("role"), std::string::npos);
  EXPECT_EQ(minnow_chat_apply(c.m, nullptr, 1, true, buf.data(), buf.size(), &n), MINNOW_ERR_INVALID_ARGUMENT);
}

TEST(CApi, SessionsAndLogits) {
  CModel c(kTiny);
  minnow_session* s = nullptr;
  EXPECT_EQ(minnow_session_create(c.m, nullptr, nullptr), MINNOW_ERR_INVALID_ARGUMENT);
  minnow_session_params bad = minnow_session_params_default();
  bad.n_batch = -1;
  EXPECT_EQ(minnow_session_create(c.m, &bad, &s), MINNOW_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(s, nullptr);

  minnow_session_params p = minnow_session_params_default();
  p.n_ctx = 64;
  CSession cs(c.m, &p);
  EXPECT_EQ(minnow_session_n_ctx(cs.s), 64);
  EXPECT_EQ(minnow_session_n_past(cs.s), 0);

  auto cpp = minnow::Model::load(kTiny);
  minnow::Session ref(*cpp, {.ctx = 64});
  const std::vector<int32_t> ids = cpp->tokenize("one two three four");
  const auto want = ref.eval(ids);
  std::vector<float> logits(want.size());
  ASSERT_EQ(minnow_session_eval(cs.s, ids.data(), ids.size(), logits.data(), logits.size()), MINNOW_OK);
  EXPECT_EQ(logits, std::vector<float>(want.begin(), want.end()));
  EXPECT_EQ(minnow_session_n_past(cs.s), static_cast<int32_t>(ids.size()));

  std::vector<float> all(ids.size() * want.size());
  ASSERT_EQ(minnow_session_eval_all(cs.s, ids.data(), ids.size(), all.data(), all.size()), MINNOW_OK);
  const size_t last = (ids.size() - 1) * want.size();
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(all[last + i], want[i], 1e-4f);

  EXPECT_EQ(minnow_session_eval(cs.s, ids.data(), ids.size(), logits.data(), 10), MINNOW_ERR_BUFFER_TOO_SMALL);
  EXPECT_EQ(minnow_session_eval(cs.s, ids.data(), ids.size(), nullptr, 0), MINNOW_ERR_BUFFER_TOO_SMALL);
  EXPECT_EQ(minnow_session_eval(cs.s, nullptr, 3, logits.data(), logits.size()), MINNOW_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(minnow_session_eval(cs.s, ids.data(), 0, logits.data(), logits.size()), MINNOW_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(minnow_session_eval_all(cs.s, ids.data(), ids.size(), all.data(), all.size() - 1), MINNOW_ERR_BUFFER_TOO_SMALL);
  const int32_t outside[] = {1, 99999};
  EXPECT_EQ(minnow_session_eval(cs.s, outside, 2, logits.data(), logits.size()), MINNOW_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(minnow_last_error()).find("99999"), std::string::npos);
  std::vector<int32_t> too_long(65, 5);
  EXPECT_EQ(minnow_session_eval(cs.s, too_long.data(), too_long.size(), logits.data(), logits.size()), MINNOW_ERR_CONTEXT_FULL);
  std::vector<float> big(too_long.size() * want.size());
  EXPECT_EQ(minnow_session_eval_all(cs.s, too_long.data(), too_long.size(), big.data(), big.size()), MINNOW_ERR_CONTEXT_FULL);

  EXPECT_EQ(minnow_session_reset(cs.s), MINNOW_OK);
  EXPECT_EQ(minnow_session_n_past(cs.s), 0);
}

TEST(CApi, GrammarAndLookupDraftInGeneration) {
  CModel c(kTiny);
  CSession cs(c.m);
  // The grammar holds greedy output to three letters and the end.
  minnow_generate_params p = greedy(24);
  p.grammar = "root ::= [a-z] [a-z] [a-z]";
  Stream st;
  ASSERT_EQ(minnow_generate(cs.s, "one two three", &p, Stream::callback, &st, nullptr), MINNOW_OK) << minnow_last_error();
  EXPECT_EQ(st.text.size(), 3u) << st.text;
  p.grammar = "root ::= nope";
  EXPECT_EQ(minnow_generate(cs.s, "one", &p, nullptr, nullptr, nullptr), MINNOW_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(minnow_last_error()).find("'nope' is used but not defined"), std::string::npos);
  // Prompt lookup leaves greedy output as it was.
  const std::vector<int32_t> prompt = tokenize(c.m, "one two three one two three one two");
  const std::vector<int32_t> want = cpp_greedy(kTiny, prompt, 24);
  minnow_generate_params q = greedy(24);
  q.lookup_draft = 6;
  Stream st2;
  CSession cs2(c.m);
  ASSERT_EQ(minnow_generate(cs2.s, "one two three one two three one two", &q, Stream::callback, &st2, nullptr), MINNOW_OK);
  EXPECT_EQ(st2.ids, want);
  q.lookup_draft = -1;
  EXPECT_EQ(minnow_generate(cs2.s, "one", &q, nullptr, nullptr, nullptr), MINNOW_ERR_INVALID_ARGUMENT);
  // A draft model (the model itself: the same vocabulary) leaves greedy output as it was,
  // with prompt lookup and alone.
  {
    CModel draft(kTiny);
    CSession cs3(c.m);
    ASSERT_EQ(minnow_session_set_draft(cs3.s, draft.m, 4, 0.0f), MINNOW_OK) << minnow_last_error();
    for (int32_t lookup : {0, 6}) {
      minnow_generate_params g = greedy(24);
      g.lookup_draft = lookup;
      Stream st3;
      ASSERT_EQ(minnow_session_reset(cs3.s), MINNOW_OK);
      ASSERT_EQ(minnow_generate(cs3.s, "one two three one two three one two", &g, Stream::callback, &st3, nullptr), MINNOW_OK)
          << minnow_last_error();
      EXPECT_EQ(st3.ids, want) << "lookup_draft " << lookup;
    }
    EXPECT_EQ(minnow_session_set_draft(cs3.s, draft.m, 0, 0.5f), MINNOW_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(minnow_last_error()).find("draft_max"), std::string::npos);
    EXPECT_EQ(minnow_session_set_draft(cs3.s, draft.m, 4, 1.5f), MINNOW_ERR_INVALID_ARGUMENT);
    CModel other(kSmol);
    EXPECT_EQ(minnow_session_set_draft(cs3.s, other.m, 4, 0.5f), MINNOW_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(minnow_last_error()).find("vocabulary"), std::string::npos) << minnow_last_error();
    EXPECT_EQ(minnow_session_set_draft(cs3.s, nullptr, 0, 0.0f), MINNOW_OK);  // off again
    EXPECT_EQ(minnow_session_set_draft(nullptr, draft.m, 4, 0.5f), MINNOW_ERR_INVALID_ARGUMENT);
  }
  // Schemas to grammars.
  size_t n = 0;
  char buf[512];
  ASSERT_EQ(minnow_json_schema_to_grammar(R"({"type": "boolean"})", buf, sizeof buf, &n), MINNOW_OK) << minnow_last_error();
  EXPECT_NE(std::string(buf, n).find("root ::="), std::string::npos);
  EXPECT_EQ(minnow_json_schema_to_grammar(R"({"type": "string", "pattern": "a"})", buf, sizeof buf, &n), MINNOW_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(minnow_last_error()).find("pattern"), std::string::npos);
  EXPECT_EQ(minnow_json_schema_to_grammar(nullptr, buf, sizeof buf, &n), MINNOW_ERR_INVALID_ARGUMENT);
}

TEST(CApi, GreedyGenerationMatchesTheCppApi) {
  CModel c(kTiny);
  CSession cs(c.m);
  const std::vector<int32_t> prompt = tokenize(c.m, "one two three");
  const std::vector<int32_t> want = cpp_greedy(kTiny, prompt, 24);

  Stream st;
  const minnow_generate_params p = greedy(24);
  minnow_generate_result r;
  ASSERT_EQ(minnow_generate(cs.s, "one two three", &p, Stream::callback, &st, &r), MINNOW_OK) << minnow_last_error();
  EXPECT_EQ(st.ids, want);
  EXPECT_EQ(r.n_generated, 24);
  EXPECT_EQ(r.stop_reason, MINNOW_STOP_MAX_TOKENS);
  EXPECT_EQ(r.n_prompt + r.n_reused, static_cast<int32_t>(prompt.size()));

  // From tokens, in a fresh session.
  CSession cs2(c.m);
  Stream st2;
  ASSERT_EQ(minnow_generate_tokens(cs2.s, prompt.data(), prompt.size(), &p, Stream::callback, &st2, nullptr), MINNOW_OK);
  EXPECT_EQ(st2.ids, want);
  EXPECT_EQ(st2.text, st.text);

  // No callback, no result: still fine.
  EXPECT_EQ(minnow_generate(cs2.s, "one", &p, nullptr, nullptr, nullptr), MINNOW_OK);
  // max_tokens 0 evaluates the prompt only.
  const minnow_generate_params zero = greedy(0);
  ASSERT_EQ(minnow_generate(cs2.s, "one two", &zero, Stream::callback, &st2, &r), MINNOW_OK);
  EXPECT_EQ(r.n_generated, 0);
}

TEST(CApi, StoppingByCallbackStringAndCancel) {
  CModel c(kSmol);
  CSession cs(c.m);
  const minnow_generate_params p = greedy(24);
  Stream full;
  ASSERT_EQ(minnow_generate(cs.s, "one two three", &p, Stream::callback, &full, nullptr), MINNOW_OK);
  // The same text as the C++ API streams.
  auto cpp = minnow::Model::load(kSmol);
  EXPECT_EQ(full.text, cpp->detokenize(cpp_greedy(kSmol, cpp->tokenize("one two three"), 24)));

  Stream early;
  early.stop_after = 3;
  minnow_generate_result r;
  ASSERT_EQ(minnow_generate(cs.s, "one two three", &p, Stream::callback, &early, &r), MINNOW_OK);
  EXPECT_EQ(early.ids.size(), 3u);
  EXPECT_EQ(r.stop_reason, MINNOW_STOP_CANCELLED);

  // A stop string from the middle of the greedy text: only what precedes it comes out.
  ASSERT_GE(full.text.size(), 12u);
  const std::string stop = full.text.substr(full.text.size() / 2, 3);
  const size_t cut = full.text.find(stop);
  const char* stops[] = {"never appears \x01", stop.c_str()};
  minnow_generate_params ps = p;
  ps.stop = stops;
  ps.n_stop = 2;
  Stream stopped;
  ASSERT_EQ(minnow_generate(cs.s, "one two three", &ps, Stream::callback, &stopped, &r), MINNOW_OK);
  EXPECT_EQ(stopped.text, full.text.substr(0, cut));
  EXPECT_EQ(r.stop_reason, MINNOW_STOP_STRING);

  // A stop string that never matches: all of the text, held-back parts included.
  const char* never[] = {"\x01\x02"};
  ps.stop = never;
  ps.n_stop = 1;
  Stream all;
  ASSERT_EQ(minnow_generate(cs.s, "one two three", &ps, Stream::callback, &all, &r), MINNOW_OK);
  EXPECT_EQ(all.text, full.text);
  EXPECT_EQ(r.stop_reason, MINNOW_STOP_MAX_TOKENS);

  // minnow_session_cancel from inside the stream (as another thread would).
  struct Canceller {
    minnow_session* s;
    int n = 0;
    static bool cb(const char*, size_t, int32_t id, void* u) {
      auto* c = static_cast<Canceller*>(u);
      if (id >= 0 && ++c->n == 2) minnow_session_cancel(c->s);
      return true;
    }
  } canceller{cs.s};
  ASSERT_EQ(minnow_generate(cs.s, "one two three", &p, Canceller::cb, &canceller, &r), MINNOW_OK);
  EXPECT_EQ(r.stop_reason, MINNOW_STOP_CANCELLED);
  EXPECT_EQ(r.n_generated, 2);
}

TEST(CApi, GenerationRefusesBadArguments) {
  CModel c(kTiny);
  minnow_session_params sp = minnow_session_params_default();
  sp.n_ctx = 16;
  CSession cs(c.m, &sp);
  minnow_generate_params p = greedy(4);
  EXPECT_EQ(minnow_generate(nullptr, "x", &p, nullptr, nullptr, nullptr), MINNOW_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(minnow_generate(cs.s, nullptr, &p, nullptr, nullptr, nullptr), MINNOW_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(minnow_generate_tokens(cs.s, nullptr, 2, &p, nullptr, nullptr, nullptr), MINNOW_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(minnow_generate_tokens(cs.s, nullptr, 0, &p, nullptr, nullptr, nullptr), MINNOW_ERR_INVALID_ARGUMENT);
  const int32_t outside[] = {1, -7};
  EXPECT_EQ(minnow_generate_tokens(cs.s, outside, 2, &p, nullptr, nullptr, nullptr), MINNOW_ERR_INVALID_ARGUMENT);
  std::vector<int32_t> too_long(17, 5);
  EXPECT_EQ(minnow_generate_tokens(cs.s, too_long.data(), too_long.size(), &p, nullptr, nullptr, nullptr),
            MINNOW_ERR_CONTEXT_FULL);

  minnow_generate_params q = p;
  q.max_tokens = -1;
  EXPECT_EQ(minnow_generate(cs.s, "x", &q, nullptr, nullptr, nullptr), MINNOW_ERR_INVALID_ARGUMENT);
  q = p;
  q.temperature = std::nanf("");
  EXPECT_EQ(minnow_generate(cs.s, "x", &q, nullptr, nullptr, nullptr), MINNOW_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(minnow_last_error()).find("NaN"), std::string::npos);
  q = p;
  q.repeat_penalty = 0;
  EXPECT_EQ(minnow_generate(cs.s, "x", &q, nullptr, nullptr, nullptr), MINNOW_ERR_INVALID_ARGUMENT);
  q = p;
  q.n_stop = 2;
  EXPECT_EQ(minnow_generate(cs.s, "x", &q, nullptr, nullptr, nullptr), MINNOW_ERR_INVALID_ARGUMENT);
  const char* null_stop[] = {"a", nullptr};
  q.stop = null_stop;
  EXPECT_EQ(minnow_generate(cs.s, "x", &q, nullptr, nullptr, nullptr), MINNOW_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(minnow_last_error()).find("stop[1]"), std::string::npos);

  // The session still works after all of that, and the context filling up is a stop.
  minnow_generate_result r;
  const minnow_generate_params many = greedy(100);
  ASSERT_EQ(minnow_generate(cs.s, "one two", &many, nullptr, nullptr, &r), MINNOW_OK) << minnow_last_error();
  EXPECT_EQ(r.stop_reason, MINNOW_STOP_CONTEXT_FULL);
}

TEST(CApi, SessionOutlivesItsModelHandle) {
  minnow_model* m = nullptr;
  ASSERT_EQ(minnow_model_load(kTiny.c_str(), nullptr, &m), MINNOW_OK);
  minnow_session* s = nullptr;
  ASSERT_EQ(minnow_session_create(m, nullptr, &s), MINNOW_OK);
  minnow_model_free(m);  // the session keeps the model alive
  const minnow_generate_params p = greedy(4);
  minnow_generate_result r;
  EXPECT_EQ(minnow_generate(s, "one two", &p, nullptr, nullptr, &r), MINNOW_OK) << minnow_last_error();
  EXPECT_EQ(r.n_generated, 4);
  minnow_session_free(s);
}

// The backend is a model default too: on Vulkan the greedy continuation is the CPU's.
TEST(CApi, VulkanBackendGeneratesAsTheCpu) {
#if MINNOW_HAVE_VULKAN
  MINNOW_NEED_VULKAN_DEVICE();
  minnow_model_params mp = minnow_model_params_default();
  mp.backend = MINNOW_BACKEND_VULKAN;
  CModel c(kTiny, &mp);
  CSession cs(c.m);
  const std::vector<int32_t> prompt = tokenize(c.m, "one two three");
  Stream st;
  const minnow_generate_params p = greedy(16);
  ASSERT_EQ(minnow_generate(cs.s, "one two three", &p, Stream::callback, &st, nullptr), MINNOW_OK) << minnow_last_error();
  EXPECT_EQ(st.ids, cpp_greedy(kTiny, prompt, 16));
  // One layer on the device, the rest on the CPU.
  mp.gpu_layers = 1;
  CModel half(kTiny, &mp);
  CSession hs(half.m);
  Stream hst;
  ASSERT_EQ(minnow_generate(hs.s, "one two three", &p, Stream::callback, &hst, nullptr), MINNOW_OK) << minnow_last_error();
  EXPECT_EQ(hst.ids, st.ids);
  mp.gpu_layers = -2;
  minnow_model* bad = nullptr;
  EXPECT_EQ(minnow_model_load(kTiny.c_str(), &mp, &bad), MINNOW_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(minnow_last_error()).find("gpu_layers"), std::string::npos) << minnow_last_error();
  mp.gpu_layers = -1;
  // A device that is not there: one line, no session.
  mp.device = 99;
  CModel c2(kTiny, &mp);
  minnow_session* s = nullptr;
  EXPECT_EQ(minnow_session_create(c2.m, nullptr, &s), MINNOW_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(minnow_last_error()).find("no device 99"), std::string::npos) << minnow_last_error();
  EXPECT_EQ(s, nullptr);
#else
  GTEST_SKIP() << "built without the Vulkan backend";
#endif
}

TEST(CApi, ModelDefaultsReachSessions) {
  minnow_model_params mp = minnow_model_params_default();
  mp.n_ctx = 32;
  mp.n_threads = 1;
  mp.kv_type = MINNOW_KV_F32;
  CModel c(kTiny, &mp);
  CSession cs(c.m);
  EXPECT_EQ(minnow_session_n_ctx(cs.s), 32);
  minnow_session_params sp = minnow_session_params_default();
  sp.n_ctx = 48;
  CSession cs2(c.m, &sp);
  EXPECT_EQ(minnow_session_n_ctx(cs2.s), 48);
}

}  // namespace

TEST(CApi, EmbeddingsMatchTheCppApi) {
  const std::string dir = kRoot + "/models/all-MiniLM-L6-v2";
  if (!std::filesystem::exists(dir + "/model.safetensors")) GTEST_SKIP() << "scripts/fetch-models --minilm";
  minnow_embedder* e = nullptr;
  minnow_embedder_params p = minnow_embedder_params_default();
  p.precision = 7;
  EXPECT_EQ(minnow_embedder_load(dir.c_str(), &p, &e), MINNOW_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(minnow_last_error()).find("minnow_embed_precision"), std::string::npos);
  EXPECT_EQ(minnow_embedder_load("/nonexistent", nullptr, &e), MINNOW_ERR_LOAD);
  EXPECT_EQ(e, nullptr);
  p = minnow_embedder_params_default();
  p.n_threads = 2;
  ASSERT_EQ(minnow_embedder_load(dir.c_str(), &p, &e), MINNOW_OK) << minnow_last_error();
  ASSERT_EQ(minnow_embedder_dim(e), 384);
  const char* texts[] = {"A cat sits on the mat.", "Une phrase en français!xx"};
  const size_t lengths[] = {std::strlen(texts[0]), std::strlen(texts[1]) - 2};  // not NUL-terminated where it ends
  std::vector<float> out(2 * 384);
  int64_t tokens = 0;
  EXPECT_EQ(minnow_embed(e, texts, lengths, 2, out.data(), 383, &tokens), MINNOW_ERR_BUFFER_TOO_SMALL);
  ASSERT_EQ(minnow_embed(e, texts, lengths, 2, out.data(), out.size(), &tokens), MINNOW_OK) << minnow_last_error();
  auto cpp = minnow::Embedder::load(dir, {.n_threads = 2});
  const std::vector<std::string> same = {texts[0], std::string(texts[1], lengths[1])};
  int64_t cpp_tokens = 0;
  EXPECT_EQ(cpp->embed(same, 32, &cpp_tokens), out);
  EXPECT_EQ(tokens, cpp_tokens);
  const char* null_text[] = {nullptr};
  EXPECT_EQ(minnow_embed(e, null_text, nullptr, 1, out.data(), out.size(), nullptr), MINNOW_ERR_INVALID_ARGUMENT);
  minnow_embedder_free(e);
  EXPECT_EQ(minnow_embedder_dim(e), 0);
  EXPECT_EQ(minnow_embed(e, texts, nullptr, 1, out.data(), out.size(), nullptr), MINNOW_ERR_INVALID_ARGUMENT);
  minnow_embedder_free(e);  // a second free is ignored
}
