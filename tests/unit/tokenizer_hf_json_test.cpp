// tokenizer_from_hf_json on small hand-written files: the constructs it maps, and Errors
// (never crashes) for malformed or unsupported input.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "base/error.hpp"
#include "tokenizer/nfc.hpp"
#include "tokenizer/tokenizer.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A tokenizer.json in a fresh directory (each test its own, so no config leaks between).
std::string write_tokenizer(const std::string& test, const std::string& text, const std::string& config = "") {
  fs::path dir = fs::temp_directory_path() / ("minnow_hf_json_" + test);
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "tokenizer.json") << text;
  if (!config.empty()) std::ofstream(dir / "tokenizer_config.json") << config;
  return (dir / "tokenizer.json").string();
}

// Byte-level vocabulary "a", "b", "ab", "Ġ", "Ġab" with merges in both accepted forms.
json tiny() {
  return json::parse(R"({
    "added_tokens": [{"id": 5, "content": "<s>", "special": true, "lstrip": false, "rstrip": false,
                      "normalized": false, "single_word": false},
                     {"id": 6, "content": "<tool>", "special": false}],
    "normalizer": null,
    "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "use_regex": true},
    "post_processor": {"type": "TemplateProcessing",
                       "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
                       "special_tokens": {"<s>": {"id": "<s>", "ids": [5], "tokens": ["<s>"]}}},
    "decoder": {"type": "ByteLevel"},
    "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2, "Ġ": 3, "Ġab": 4},
              "merges": ["a b", ["Ġ", "ab"]]}})");
}

std::string load_error(const std::string& test, const std::string& text) {
  try {
    minnow::tokenizer_from_hf_json(write_tokenizer(test, text));
  } catch (const minnow::Error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST(TokenizerHfJson, MapsVocabMergesAddedTokensAndBos) {
  auto tok = minnow::tokenizer_from_hf_json(write_tokenizer("tiny", tiny().dump(), R"({"eos_token": {"content": "<s>"}})"));
  EXPECT_EQ(tok->vocab_size(), 7);
  EXPECT_TRUE(tok->add_bos());
  EXPECT_EQ(tok->bos_id(), 5);
  EXPECT_EQ(tok->eos_id(), 5);
  EXPECT_EQ(tok->encode("ab ab<tool>", true), (std::vector<int32_t>{5, 2, 4, 6}));
  EXPECT_EQ(tok->decode({5, 2, 4, 6}), "ab ab<tool>");  // control tokens hidden, user-defined kept
}

TEST(TokenizerHfJson, UsesTheFilesOwnSplitPattern) {
  json j = tiny();
  j["pre_tokenizer"] = json::parse(R"({"type": "Sequence", "pretokenizers": [
      {"type": "Split", "pattern": {"Regex": "b"}, "behavior": "Isolated", "invert": false},
      {"type": "ByteLevel", "add_prefix_space": false, "use_regex": false}]})");
  auto tok = minnow::tokenizer_from_hf_json(write_tokenizer("split", j.dump()));
  EXPECT_EQ(tok->encode("ab", true), (std::vector<int32_t>{5, 0, 1}));  // "b" isolated: no merge
}

TEST(TokenizerHfJson, MalformedFilesAreErrors) {
  EXPECT_NE(load_error("trunc", "{\"model\": {\"vocab\": ").find("not valid JSON"), std::string::npos);
  EXPECT_NE(load_error("notobj", "[1, 2]").find("tokenizer"), std::string::npos);
  EXPECT_NE(load_error("badtype", R"({"model": {"type": "BPE", "vocab": {"a": "x"}, "merges": []}})").find("malformed"),
            std::string::npos);
  json j = tiny();
  j["model"]["vocab"]["zz"] = -4;
  EXPECT_NE(load_error("negid", j.dump()).find("out of range"), std::string::npos);
  EXPECT_THROW(minnow::tokenizer_from_hf_json("/nonexistent/tokenizer.json"), minnow::Error);
  j = tiny();
  json deep = j["pre_tokenizer"];
  for (int i = 0; i < 100; ++i) deep = json{{"type", "Sequence"}, {"pretokenizers", json::array({deep})}};
  j["pre_tokenizer"] = deep;
  EXPECT_NE(load_error("deep", j.dump()).find("deep"), std::string::npos);
}

TEST(TokenizerHfJson, UnsupportedConstructsAreNamed) {
  json j = tiny();
  j["model"]["type"] = "Unigram";
  EXPECT_NE(load_error("unigram", j.dump()).find("Unigram"), std::string::npos);
  j = tiny();
  j["normalizer"] = json::parse(R"({"type": "Lowercase"})");
  EXPECT_NE(load_error("lower", j.dump()).find("Lowercase"), std::string::npos);
  j = tiny();
  j["pre_tokenizer"] = json::parse(R"({"type": "Metaspace"})");
  EXPECT_NE(load_error("metaspace", j.dump()).find("Metaspace"), std::string::npos);
  j = tiny();
  j["decoder"] = json::parse(R"({"type": "WordPiece"})");
  EXPECT_NE(load_error("wordpiece", j.dump()).find("WordPiece"), std::string::npos);
  j = tiny();
  j["decoder"] = json::parse(R"({"type": "ByteFallback"})");
  EXPECT_NE(load_error("mismatch", j.dump()).find("decoder"), std::string::npos);
}

// SentencePiece-style BPE: "▁" escapes spaces, unknown characters fall back to bytes.
TEST(TokenizerHfJson, SentencePieceStyleWithByteFallback) {
  json j = json::parse(R"({
    "added_tokens": [{"id": 0, "content": "<unk>", "special": true, "normalized": false},
                     {"id": 1, "content": "<s>", "special": true, "normalized": false}],
    "normalizer": {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "▁"},
                   {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]},
    "pre_tokenizer": null,
    "post_processor": {"type": "TemplateProcessing",
                       "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
                       "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}},
    "decoder": {"type": "Sequence", "decoders": [{"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
                {"type": "ByteFallback"}, {"type": "Fuse"}, {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
    "model": {"type": "BPE", "byte_fallback": true, "fuse_unk": true, "unk_token": "<unk>",
              "vocab": {"<unk>": 0, "<s>": 1, "<0xC3>": 2, "<0xA9>": 3, "▁": 4, "a": 5, "b": 6, "▁a": 7, "▁ab": 8},
              "merges": ["▁ a", "▁a b"]}})");
  auto tok = minnow::tokenizer_from_hf_json(write_tokenizer("spm", j.dump()));
  // "ab a" -> "▁ab▁a"; "é" is not in the vocabulary: its two bytes stand in.
  EXPECT_EQ(tok->encode("ab a", true), (std::vector<int32_t>{1, 8, 7}));
  EXPECT_EQ(tok->encode("a\xC3\xA9", true), (std::vector<int32_t>{1, 7, 2, 3}));
  EXPECT_EQ(tok->encode("z", true), (std::vector<int32_t>{1, 4, 0}));  // no byte tokens for 'z': unknown
  EXPECT_EQ(tok->decode({1, 8, 7}), "ab a");                            // leading space stripped
  EXPECT_EQ(tok->decode({1, 7, 2, 3}, true), "<s> a\xC3\xA9");
}

TEST(Nfc, ComposesReordersAndPassesInvalidBytes) {
  EXPECT_EQ(minnow::nfc_normalize("e\xCC\x81"), "\xC3\xA9");                    // e + U+0301 -> é
  EXPECT_EQ(minnow::nfc_normalize("\xE1\x84\x80\xE1\x85\xA1"), "\xEA\xB0\x80");  // jamo -> 가
  EXPECT_EQ(minnow::nfc_normalize("\xE2\x84\xAB"), "\xC3\x85");                  // Angstrom sign -> Å
  // q + dot below (220) after acute (230) reorders to dot below first.
  EXPECT_EQ(minnow::nfc_normalize("q\xCC\x81\xCC\xA3"), "q\xCC\xA3\xCC\x81");
  EXPECT_EQ(minnow::nfc_normalize("a\xFF" "e\xCC\x81"), "a\xFF\xC3\xA9");
}

TEST(TokenizerHfJson, PostProcessorMayAppendEos) {
  json j = tiny();
  j["post_processor"]["single"].push_back(json::parse(R"({"SpecialToken": {"id": "</s>", "type_id": 0}})"));
  j["post_processor"]["special_tokens"]["</s>"] = json::parse(R"({"id": "</s>", "ids": [6], "tokens": ["</s>"]})");
  auto tok = minnow::tokenizer_from_hf_json(write_tokenizer("eos", j.dump()));
  EXPECT_EQ(tok->encode("ab", true), (std::vector<int32_t>{5, 2, 6}));
  j["post_processor"]["single"].push_back(j["post_processor"]["single"][0]);  // a third special token
  EXPECT_NE(load_error("eos3", j.dump()).find("TemplateProcessing"), std::string::npos);
}
