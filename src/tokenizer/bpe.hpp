// Byte-level BPE (GPT-2 style): text -> special-token split -> pre-tokenizer words ->
// bytes mapped to printable characters -> merges applied by rank.
#pragma once
#include <array>
#include <string>
#include <unordered_map>
#include <vector>

#include "tokenizer/pretokenizer.hpp"
#include "tokenizer/tokenizer.hpp"

namespace minnow {

struct BpeVocab {
  std::vector<std::string> tokens;                   // as stored (byte-level characters)
  std::vector<TokenType> types;                      // same length as tokens
  std::vector<std::pair<std::string, std::string>> merges;  // in rank order
  std::string pre_tokenizer = "gpt2";
  std::vector<std::string> pre_patterns;  // explicit regexes; when set, pre_tokenizer is unused
  bool nfc = false;            // NFC-normalize text outside special tokens (tokenizer.json normalizer)
  bool ignore_merges = false;  // a word found whole in the vocabulary is one token (Llama 3)
  int32_t bos_id = -1, eos_id = -1, eot_id = -1;
  bool add_bos = false;
};

class BpeTokenizer : public Tokenizer {
 public:
  explicit BpeTokenizer(BpeVocab vocab);  // throws Error on an inconsistent vocabulary

  std::vector<int32_t> encode(std::string_view text, bool parse_special) const override;
  std::string_view token_bytes(int32_t id, bool render_special = false) const override;
  const std::string& token_text(int32_t id) const override { return v_.tokens.at(static_cast<size_t>(id)); }
  int vocab_size() const override { return static_cast<int>(v_.tokens.size()); }

 private:
  void encode_word(std::string_view word, std::vector<int32_t>& out) const;

  struct Merge {
    int32_t rank, result;
  };
  static uint64_t pair_key(int32_t a, int32_t b) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
  }

  BpeVocab v_;
  PreTokenizer pre_;
  std::unordered_map<std::string, int32_t> ids_;
  std::unordered_map<uint64_t, Merge> merges_;
  std::array<int32_t, 256> byte_token_{};
  std::vector<std::string> bytes_;  // decoded bytes of each token
  std::vector<int32_t> specials_;   // control and user-defined tokens, longest text first
  std::array<std::string, 256> byte_chars_;  // byte -> byte-level character, for ignore_merges
};

}  // namespace minnow
