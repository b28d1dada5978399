// Tokenizers: any bytes (invalid UTF-8 included) must encode to ids inside the vocabulary,
// never crash, and decode back to the input where the tokenizer can represent it exactly.
// Four tokenizers: a small byte-level BPE, a small SentencePiece-style BPE and a small
// WordPiece (BERT's normalizer and pre-tokenizer, all options on) built here (added tokens
// with every flag, normalizers, byte fallback, unknown token), and SmolLM2's real one when
// models/ holds it. Input: a selector byte, then the text.
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "formats/gguf.hpp"
#include "fuzz_target.hpp"
#include "tokenizer/bpe.hpp"
#include "tokenizer/byte_level.hpp"
#include "tokenizer/wordpiece.hpp"

namespace {

using minnow::AddedToken;
using minnow::BpeVocab;

const char* const kSpace = "\xe2\x96\x81";  // ▁

void add_merges(BpeVocab& v, const std::vector<std::pair<std::string, std::string>>& merges) {
  for (const auto& [a, b] : merges) {
    v.tokens.push_back(a + b);
    v.merges.push_back(a, b);
  }
}

void add_flagged_tokens(BpeVocab& v) {
  const std::vector<AddedToken> added = {
      {-1, "<|s|>", true, false, false, false, false}, {-1, "<l>", true, true, false, false, false},
      {-1, "<r>", false, false, true, false, false},   {-1, "wd", false, false, false, true, false},
      {-1, "no rm", false, false, false, false, true}, {-1, "<|s|>x", false, true, true, true, false},
  };
  for (auto a : added) {
    a.id = static_cast<int32_t>(v.tokens.size());
    v.tokens.push_back(a.content);
    v.types.resize(v.tokens.size(), minnow::TokenType::Normal);
    v.types.back() = a.special ? minnow::TokenType::Control : minnow::TokenType::UserDefined;
    v.added.push_back(a);
  }
}

std::unique_ptr<minnow::Tokenizer> byte_level() {
  BpeVocab v;
  for (const auto& c : minnow::byte_level_chars()) v.tokens.push_back(c);
  add_merges(v, {{"t", "h"}, {"th", "e"}, {"Ġ", "t"}, {"Ġt", "he"}, {"i", "n"}, {"Ġ", "in"}, {"e", "r"}, {"Ã", "©"}});
  v.types.assign(v.tokens.size(), minnow::TokenType::Normal);
  add_flagged_tokens(v);
  v.pre_splits = minnow::PreTokenizer::preset("llama3");
  v.ignore_merges = true;
  v.bos_id = 0;
  v.add_bos = true;
  return std::make_unique<minnow::BpeTokenizer>(std::move(v));
}

std::unique_ptr<minnow::Tokenizer> sentencepiece() {
  BpeVocab v;
  v.symbols = BpeVocab::Symbols::Chars;
  v.tokens = {"<unk>", kSpace, "a", "b", "t", "h", "e"};
  for (int b = 0; b < 200; ++b) {  // bytes 200..255 missing: some characters become <unk>
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    v.tokens.push_back(name);
  }
  add_merges(v, {{kSpace, "t"}, {"t", "h"}, {std::string(kSpace) + "t", "h"}, {"a", "b"}, {kSpace, kSpace}});
  v.types.assign(v.tokens.size(), minnow::TokenType::Normal);
  add_flagged_tokens(v);
  v.byte_fallback = true;
  v.unk_id = 0;
  v.fuse_unk = true;
  v.normalizer.prepend = kSpace;
  v.normalizer.replace = {{" ", kSpace}};
  v.decode_replace = {{kSpace, " "}};
  v.strip_leading_spaces = 1;
  return std::make_unique<minnow::BpeTokenizer>(std::move(v));
}

std::unique_ptr<minnow::Tokenizer> smollm2() {
  const auto path = std::filesystem::path(__FILE__).parent_path() / "../../models/SmolLM2-135M-Instruct.Q4_1.gguf";
  if (!std::filesystem::exists(path)) return nullptr;
  auto f = minnow::GgufFile::open(path.string());
  return minnow::tokenizer_from_gguf(*f);
}

std::unique_ptr<minnow::Tokenizer> wordpiece() {
  minnow::WordPieceVocab v;
  v.tokens = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "a", "##b", "##bc", "ab", "e", "\xe6\x97\xa5", "!", "##\xc3\xa9", "i"};
  v.types.assign(v.tokens.size(), minnow::TokenType::Normal);
  for (int32_t id = 0; id < 4; ++id) {
    v.types[static_cast<size_t>(id)] = minnow::TokenType::Control;
    v.added.push_back({id, v.tokens[static_cast<size_t>(id)], true, false, false, false, false});
  }
  v.unk_id = 1;
  v.bos_id = 2;
  v.eos_id = 3;
  v.add_bos = v.add_eos = true;
  v.max_input_chars_per_word = 12;
  return std::make_unique<minnow::WordPieceTokenizer>(std::move(v));
}

// Index 0: byte-level, 1: SentencePiece-style, 2: SmolLM2 (null when models/ lacks it), 3: WordPiece.
const std::vector<std::unique_ptr<minnow::Tokenizer>>& tokenizers() {
  static const auto all = [] {
    std::vector<std::unique_ptr<minnow::Tokenizer>> t;
    t.push_back(byte_level());
    t.push_back(sentencepiece());
    t.push_back(smollm2());
    t.push_back(wordpiece());
    return t;
  }();
  return all;
}

}  // namespace

MINNOW_FUZZ_TARGET(tokenizer) {
  if (size == 0) return;
  const auto& all = tokenizers();
  const size_t which = data[0] & 3;
  if (!all[which]) return;
  const auto& tok = *all[which];
  const bool parse_special = data[0] & 0x80;
  const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  const auto ids = tok.encode(text, parse_special);
  for (int32_t id : ids) minnow::fuzz::fuzz_check(id >= 0 && id < tok.vocab_size(), "id outside the vocabulary");
  const std::string back = tok.decode(ids, /*render_special=*/true);
  // The byte-level tokenizer covers every byte and normalizes nothing: decoding restores
  // the text exactly (after the BOS it adds, which renders as its byte), unless a token
  // that strips whitespace around it matched.
  const bool strips = parse_special || text.find("<r>") != std::string::npos || text.find("<|s|>x") != std::string::npos;
  if (which == 0 && !strips)
    minnow::fuzz::fuzz_check(back.size() >= 1 && back.substr(1) == text, "byte-level decode(encode(x)) != x");
}
