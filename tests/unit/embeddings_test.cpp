// Sentence embeddings: the WordPiece tokenizer on a hand-written tokenizer.json (pieces,
// unknown words, normalization, errors), all-MiniLM-L6-v2 against sentence-transformers'
// golden embeddings (tests/reference/make_golden_minilm.py) at every precision, batching,
// truncation, bad model directories, and the /v1/embeddings request and response shapes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "base/error.hpp"
#include "minnow/embed.hpp"
#include "server/embeddings_api.hpp"
#include "server/openai_api.hpp"
#include "tensor/fp16.hpp"
#include "tokenizer/tokenizer.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kRoot = MINNOW_SOURCE_DIR;
const std::string kModel = kRoot + "/models/all-MiniLM-L6-v2";

std::string write_file(const std::string& dir_name, const std::string& file, const std::string& text) {
  fs::path dir = fs::temp_directory_path() / dir_name;
  fs::create_directories(dir);
  std::ofstream(dir / file) << text;
  return (dir / file).string();
}

json wordpiece_json() {
  return json::parse(R"({
    "added_tokens": [{"id": 0, "content": "[PAD]", "special": true, "normalized": false, "single_word": false, "lstrip": false, "rstrip": false},
                     {"id": 1, "content": "[UNK]", "special": true, "normalized": false, "single_word": false, "lstrip": false, "rstrip": false},
                     {"id": 2, "content": "[CLS]", "special": true, "normalized": false, "single_word": false, "lstrip": false, "rstrip": false},
                     {"id": 3, "content": "[SEP]", "special": true, "normalized": false, "single_word": false, "lstrip": false, "rstrip": false}],
    "normalizer": {"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true,
                   "strip_accents": null, "lowercase": true},
    "pre_tokenizer": {"type": "BertPreTokenizer"},
    "post_processor": {"type": "TemplateProcessing",
      "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                 {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
      "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
      "special_tokens": {"[CLS]": {"id": "[CLS]", "ids": [2], "tokens": ["[CLS]"]},
                         "[SEP]": {"id": "[SEP]", "ids": [3], "tokens": ["[SEP]"]}}},
    "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": true},
    "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
              "max_input_chars_per_word": 9,
              "vocab": {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, "un": 4, "##aff": 5, "##able": 6,
                        "cafe": 7, ",": 8, "日": 9, "!": 10, "a": 11}}
  })");
}

TEST(WordPiece, GreedyLongestPiecesNormalizationAndUnknownWords) {
  const std::string path = write_file("minnow_wordpiece", "tokenizer.json", wordpiece_json().dump());
  auto tok = minnow::tokenizer_from_hf_json(path);
  using V = std::vector<int32_t>;
  EXPECT_EQ(tok->encode("unaffable", true), (V{2, 4, 5, 6, 3}));
  EXPECT_EQ(tok->encode("UNAFFABLE, Café!", true), (V{2, 4, 5, 6, 8, 7, 10, 3}));  // lowercase, accents stripped
  EXPECT_EQ(tok->encode("unaffx", true), (V{2, 1, 3}));            // a part no piece covers: one [UNK]
  EXPECT_EQ(tok->encode("aaaaaaaaaa", true), (V{2, 1, 3}));         // longer than max_input_chars_per_word
  EXPECT_EQ(tok->encode("a日a", true), (V{2, 11, 9, 11, 3}));       // CJK characters are words
  EXPECT_EQ(tok->encode("a\x01\tа", true), (V{2, 11, 1, 3}));      // control dropped; Cyrillic а unknown
  EXPECT_EQ(tok->encode("[CLS]a", true), (V{2, 2, 11, 3}));         // special tokens found in the raw text
  EXPECT_EQ(tok->encode("", true), (V{2, 3}));
  EXPECT_EQ(tok->decode({2, 4, 5, 6, 8, 7, 10, 3}, false), "unaffable, cafe!");
}

TEST(WordPiece, MalformedOrUnsupportedFilesAreErrors) {
  auto expect_error = [](json j, const char* what) {
    const std::string path = write_file("minnow_wordpiece_bad", "tokenizer.json", j.dump());
    try {
      minnow::tokenizer_from_hf_json(path);
      ADD_FAILURE() << "accepted: " << what;
    } catch (const minnow::Error& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  json j = wordpiece_json();
  j["normalizer"] = {{"type", "NFC"}};
  expect_error(j, "normalizer 'NFC' with a WordPiece model");
  j = wordpiece_json();
  j["pre_tokenizer"] = {{"type", "Whitespace"}};
  expect_error(j, "pre-tokenizer 'Whitespace'");
  j = wordpiece_json();
  j["model"]["unk_token"] = "<unk>";
  expect_error(j, "unk_token '<unk>'");
  j = wordpiece_json();
  j["model"]["vocab"] = "oops";
  expect_error(j, "malformed");
}

// The golden texts and their sentence-transformers embeddings (float16).
struct Golden {
  std::vector<std::string> texts;
  std::vector<float> embeddings;  // 384 per text
};

const Golden& golden() {
  static const Golden g = [] {
    Golden g;
    std::ifstream t(kRoot + "/tests/reference/golden/minilm/texts.json");
    g.texts = json::parse(t).get<std::vector<std::string>>();
    std::ifstream e(kRoot + "/tests/reference/golden/minilm/embeddings.f16", std::ios::binary);
    std::vector<uint16_t> h(g.texts.size() * 384);
    e.read(reinterpret_cast<char*>(h.data()), static_cast<std::streamsize>(h.size() * 2));
    for (uint16_t v : h) g.embeddings.push_back(minnow::fp16_to_fp32(v));
    return g;
  }();
  return g;
}

double cosine(const float* a, const float* b, int n) {
  double ab = 0, aa = 0, bb = 0;
  for (int i = 0; i < n; ++i) {
    ab += static_cast<double>(a[i]) * b[i];
    aa += static_cast<double>(a[i]) * a[i];
    bb += static_cast<double>(b[i]) * b[i];
  }
  return ab / std::sqrt(aa * bb);
}

// Every 10th golden text (short, long past 256 tokens, every script), at each precision;
// every 100th in the emulated and scalar runs (MINNOW_GOLDEN_PROMPTS set: scripts/test-aarch64,
// the Makefile's scalar run), where the 100 take minutes.
TEST(Embeddings, MatchSentenceTransformers) {
  if (!fs::exists(kModel + "/model.safetensors")) GTEST_SKIP() << "scripts/fetch-models --minilm";
  const Golden& g = golden();
  const size_t stride = std::getenv("MINNOW_GOLDEN_PROMPTS") ? 100 : 10;
  std::vector<std::string> texts;
  std::vector<const float*> want;
  for (size_t i = 0; i < g.texts.size(); i += stride) {
    texts.push_back(g.texts[i]);
    want.push_back(g.embeddings.data() + i * 384);
  }
  struct Level {
    minnow::EmbedderOptions::Precision p;
    const char* name;
    double min_cosine;
  };
  for (const Level& l : {Level{minnow::EmbedderOptions::Precision::F32, "f32", 0.999999},
                         Level{minnow::EmbedderOptions::Precision::BF16, "bf16", 0.9999},
                         Level{minnow::EmbedderOptions::Precision::Q8_0, "q8_0", 0.999}}) {
    auto emb = minnow::Embedder::load(kModel, {.n_threads = 2, .precision = l.p});
    ASSERT_EQ(emb->dim(), 384);
    EXPECT_TRUE(emb->normalized());
    EXPECT_EQ(emb->pooling(), "mean");
    EXPECT_EQ(emb->max_tokens(), 256);
    const std::vector<float> got = emb->embed(texts, 8);
    double worst = 1;
    for (size_t i = 0; i < texts.size(); ++i) worst = std::min(worst, cosine(got.data() + i * 384, want[i], 384));
    std::printf("[golden] all-MiniLM-L6-v2 %s: %zu texts, min cosine %.7f\n", l.name, texts.size(), worst);
    EXPECT_GE(worst, l.min_cosine) << l.name;
  }
}

TEST(Embeddings, BatchingTruncationAndTokenInput) {
  if (!fs::exists(kModel + "/model.safetensors")) GTEST_SKIP() << "scripts/fetch-models --minilm";
  auto emb = minnow::Embedder::load(kModel, {.n_threads = 2});
  std::string long_text;
  for (int i = 0; i < 400; ++i) long_text += "word" + std::to_string(i) + " ";
  const std::vector<std::string> texts = {"short", long_text, "another sentence here", ""};
  const std::vector<float> batched = emb->embed(texts, 4);
  for (size_t i = 0; i < texts.size(); ++i) {  // alone, the same numbers: no padding, no cross-talk
    const std::vector<float> alone = emb->embed(std::span<const std::string>(&texts[i], 1), 1);
    EXPECT_EQ(0, std::memcmp(alone.data(), batched.data() + i * 384, 384 * sizeof(float))) << i;
  }
  const std::vector<int32_t> ids = emb->tokenize(long_text);
  EXPECT_EQ(ids.size(), 256u);
  EXPECT_EQ(ids.front(), 101);  // [CLS]
  EXPECT_EQ(ids.back(), 102);   // [SEP] kept at the end
  int64_t tokens = 0;
  const std::vector<float> from_ids = emb->embed_tokens(std::vector<std::vector<int32_t>>{ids}, 32, &tokens);
  EXPECT_EQ(tokens, 256);
  EXPECT_EQ(0, std::memcmp(from_ids.data(), batched.data() + 384, 384 * sizeof(float)));
  EXPECT_THROW(emb->embed_tokens(std::vector<std::vector<int32_t>>{{101, 999999}}), minnow::Error);
  EXPECT_THROW(emb->embed_tokens(std::vector<std::vector<int32_t>>{{}}), minnow::Error);
}

TEST(Embeddings, BadDirectoriesAreOneLineErrors) {
  auto message = [](const std::string& dir) {
    try {
      minnow::Embedder::load(dir);
    } catch (const minnow::Error& e) {
      return std::string(e.what());
    }
    return std::string("loaded");
  };
  EXPECT_NE(message("/nonexistent/dir").find("not a model directory"), std::string::npos);
  const fs::path dir = fs::temp_directory_path() / "minnow_embed_bad";
  fs::remove_all(dir);
  fs::create_directories(dir);
  EXPECT_NE(message(dir.string()).find("no tokenizer.json"), std::string::npos);
  std::ofstream(dir / "modules.json") << R"([{"type": "sentence_transformers.models.Dense", "path": "2_Dense"}])";
  EXPECT_NE(message(dir.string()).find("module 'sentence_transformers.models.Dense' is not supported"), std::string::npos);
  std::ofstream(dir / "modules.json") << "[";
  EXPECT_NE(message(dir.string()).find("not valid JSON"), std::string::npos);
  fs::remove(dir / "modules.json");
  std::ofstream(dir / "tokenizer.json") << wordpiece_json().dump();
  std::ofstream(dir / "config.json") << R"({"model_type": "llama"})";
  EXPECT_NE(message(dir.string()).find("model_type 'llama' is not supported"), std::string::npos);
  std::ofstream(dir / "config.json") << R"({"model_type": "bert", "hidden_size": 8})";
  EXPECT_NE(message(dir.string()).find("no integer 'num_hidden_layers'"), std::string::npos);
}

TEST(EmbeddingsApi, ParsesEveryInputFormAndNamesBadFields) {
  using minnow::server::parse_embedding_request;
  auto r = parse_embedding_request(R"({"input": "hi", "model": "m"})", "m", 384, 100);
  EXPECT_EQ(r.texts, std::vector<std::string>{"hi"});
  r = parse_embedding_request(R"({"input": ["a", "b"], "encoding_format": "base64", "dimensions": 384})", "m", 384, 100);
  EXPECT_EQ(r.texts.size(), 2u);
  EXPECT_TRUE(r.base64);
  r = parse_embedding_request(R"({"input": [1, 2, 3]})", "m", 384, 100);
  EXPECT_EQ(r.ids, (std::vector<std::vector<int32_t>>{{1, 2, 3}}));
  r = parse_embedding_request(R"({"input": [[1], [2, 3]]})", "m", 384, 100);
  EXPECT_EQ(r.ids.size(), 2u);
  auto param_of = [](const std::string& body) {
    try {
      parse_embedding_request(body, "m", 384, 100, 3);
    } catch (const minnow::server::ApiError& e) {
      EXPECT_EQ(e.status, e.param == "model" ? 404 : 400);
      return e.param;
    }
    return std::string("accepted");
  };
  EXPECT_EQ(param_of("nope"), "");
  EXPECT_EQ(param_of("{}"), "input");
  EXPECT_EQ(param_of(R"({"input": []})"), "input");
  EXPECT_EQ(param_of(R"({"input": ["a", 1]})"), "input");
  EXPECT_EQ(param_of(R"({"input": [1, 100]})"), "input");
  EXPECT_EQ(param_of(R"({"input": [[]]})"), "input");
  EXPECT_EQ(param_of(R"({"input": ["a", "b", "c", "d"]})"), "input");
  EXPECT_EQ(param_of(R"({"input": {"a": 1}})"), "input");
  EXPECT_EQ(param_of(R"({"input": "a", "encoding_format": "int8"})"), "encoding_format");
  EXPECT_EQ(param_of(R"({"input": "a", "dimensions": 128})"), "dimensions");
  EXPECT_EQ(param_of(R"({"input": "a", "model": "other"})"), "model");
}

TEST(EmbeddingsApi, ResponseShapeAndBase64) {
  EXPECT_EQ(minnow::server::base64_encode("Man", 3), "TWFu");
  EXPECT_EQ(minnow::server::base64_encode("Ma", 2), "TWE=");
  EXPECT_EQ(minnow::server::base64_encode("M", 1), "TQ==");
  const std::vector<float> v = {1.0f, -2.0f, 0.5f, 0.25f};
  json j = json::parse(minnow::server::embedding_response(v, 2, false, "mini", 7));
  EXPECT_EQ(j["object"], "list");
  EXPECT_EQ(j["model"], "mini");
  EXPECT_EQ(j["usage"]["prompt_tokens"], 7);
  ASSERT_EQ(j["data"].size(), 2u);
  EXPECT_EQ(j["data"][1]["index"], 1);
  EXPECT_EQ(j["data"][1]["embedding"], json::parse("[0.5, 0.25]"));
  j = json::parse(minnow::server::embedding_response(v, 2, true, "mini", 7));
  EXPECT_EQ(j["data"][0]["embedding"], minnow::server::base64_encode(v.data(), 8));
}

}  // namespace
