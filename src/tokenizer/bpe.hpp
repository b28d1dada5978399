// BPE tokenizer, as Hugging Face's `tokenizers` runs it: added tokens are cut out of the
// text, the rest is normalized, split into words by the pre-tokenizer, and each word
// becomes initial symbols that merges combine by rank. Two symbol alphabets:
//  - ByteLevel (GPT-2, Llama 3, Qwen, SmolLM): each byte, written as a printable character;
//  - Chars (SentencePiece-style: Llama 2, Gemma 3): each Unicode character, with bytes as
//    <0xXX> tokens when a character is not in the vocabulary (byte fallback).
#pragma once
#include <array>
#include <string>
#include <vector>

#include "tokenizer/added_tokens.hpp"
#include "tokenizer/flat_index.hpp"
#include "tokenizer/normalizer.hpp"
#include "tokenizer/pretokenizer.hpp"
#include "tokenizer/tokenizer.hpp"

namespace minnow {

struct BpeVocab {
  enum class Symbols { ByteLevel, Chars };
  Symbols symbols = Symbols::ByteLevel;
  std::vector<std::string> tokens;                   // as stored (byte-level or ▁-escaped text)
  std::vector<TokenType> types;                      // same length as tokens
  MergeList merges;                                  // in rank order
  std::vector<AddedToken> added;                     // matched in the text before the model
  Normalizer normalizer;
  std::vector<PreSplit> pre_splits;                  // none: each piece is one word
  bool ignore_merges = false;  // a word found whole in the vocabulary is one token (Llama 3)
  bool byte_fallback = false;  // Chars: unknown characters become <0xXX> tokens
  int32_t unk_id = -1;         // Chars: for characters nothing else covers
  bool fuse_unk = false;       // a run of unknown characters is one unknown token
  // Decoding (Chars): literal replacements per token ("▁" -> " "), then strip this many
  // leading spaces from the whole text (Llama 2's decoder).
  std::vector<std::pair<std::string, std::string>> decode_replace;
  int strip_leading_spaces = 0;
  int32_t bos_id = -1, eos_id = -1, eot_id = -1;
  bool add_bos = false, add_eos = false;
};

class BpeTokenizer : public Tokenizer {
 public:
  explicit BpeTokenizer(BpeVocab vocab);  // throws Error on an inconsistent vocabulary

  std::vector<int32_t> encode(std::string_view text, bool parse_special) const override;
  std::string_view token_bytes(int32_t id, bool render_special = false) const override;
  std::string_view token_text(int32_t id) const override {
    return id < 0 || id >= vocab_size() ? std::string_view() : texts_[static_cast<size_t>(id)];
  }
  int vocab_size() const override { return static_cast<int>(texts_.size()); }
  std::string decode(const std::vector<int32_t>& ids, bool render_special = false) const override;

 private:
  void encode_piece(std::string_view piece, std::vector<int32_t>& out, std::vector<std::string_view>& words) const;
  void encode_word(std::string_view word, std::vector<int32_t>& out) const;
  void initial_symbols(std::string_view word, std::vector<int32_t>& ids) const;
  void apply_merges(std::vector<int32_t>& ids) const;
  int32_t find(std::string_view text) const;
  void decode_token_bytes();  // fills bytes_

  BpeVocab v_;
  PreTokenizer pre_;
  AddedTokenMatcher raw_added_, normalized_added_;
  TextTable texts_;  // the vocabulary's token texts (v_.tokens is emptied into it)
  TextIndex ids_;    // over texts_
  MergeTable merges_;
  std::array<int32_t, 256> byte_token_{};  // ByteLevel: byte's character token; Chars: <0xXX>
  TextTable bytes_;  // every token's decoded bytes
  std::array<std::string, 256> byte_chars_;  // byte -> byte-level character, for ignore_merges
};

// The vocabulary a tokenizer.json (+ tokenizer_config.json beside it) describes, before
// it becomes a tokenizer (the GGUF converter writes it out as tokenizer.ggml.*).
BpeVocab bpe_vocab_from_hf_json(const std::string& tokenizer_json_path);

}  // namespace minnow
