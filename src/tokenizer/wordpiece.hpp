// WordPiece tokenizer (BERT and its sentence-embedding descendants), as Hugging Face's
// `tokenizers` runs it: added tokens cut out of the raw text, BertNormalizer, BertPreTokenizer,
// then each word split greedily into the longest vocabulary pieces from its start, pieces
// after the first written with "##"; a word with a part no piece covers is one [UNK].
#pragma once
#include <string>
#include <unordered_map>
#include <vector>

#include "tokenizer/added_tokens.hpp"
#include "tokenizer/bert_normalizer.hpp"
#include "tokenizer/tokenizer.hpp"

namespace minnow {

struct WordPieceVocab {
  std::vector<std::string> tokens;  // by id
  std::vector<TokenType> types;     // same length
  std::vector<AddedToken> added;
  BertNormalizerOptions normalizer;
  bool normalize = true, pre_tokenize = true;  // false: the tokenizer.json has none
  std::string continuing_prefix = "##";
  size_t max_input_chars_per_word = 100;
  int32_t unk_id = -1;
  bool decode_cleanup = true;  // the decoder glues " ." " ," " 's" ... back together
  int32_t bos_id = -1, eos_id = -1;  // [CLS] and [SEP] when the post-processor adds them
  bool add_bos = false, add_eos = false;
};

class WordPieceTokenizer : public Tokenizer {
 public:
  explicit WordPieceTokenizer(WordPieceVocab vocab);  // throws Error on an inconsistent vocabulary

  std::vector<int32_t> encode(std::string_view text, bool parse_special) const override;
  // Pieces lose their "##"; other tokens get a space before them (not before the first).
  std::string_view token_bytes(int32_t id, bool render_special = false) const override;
  std::string_view token_text(int32_t id) const override {
    return id < 0 || id >= vocab_size() ? std::string_view() : std::string_view(v_.tokens[static_cast<size_t>(id)]);
  }
  int vocab_size() const override { return static_cast<int>(v_.tokens.size()); }
  // As the WordPiece decoder does (see decode_cleanup).
  std::string decode(const std::vector<int32_t>& ids, bool render_special = false) const override;

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  void encode_word(std::string_view word, std::vector<int32_t>& out, std::string& key) const;
  int32_t find(std::string_view text) const;

  WordPieceVocab v_;
  std::unordered_map<std::string, int32_t, Hash, std::equal_to<>> ids_;
  std::vector<std::string> bytes_;  // token_bytes: the text without "##", or with a space before
  AddedTokenMatcher added_;
};

}  // namespace minnow
