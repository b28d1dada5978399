// BERT's text normalizer and pre-tokenizer (Hugging Face BertNormalizer, BertPreTokenizer),
// code point by code point from tables taken from the `tokenizers` package (bert_tables.hpp).
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace minnow {

struct BertNormalizerOptions {
  bool clean_text = true;            // drop controls; any whitespace becomes ' '
  bool handle_chinese_chars = true;  // spaces around CJK ideographs, so each is a word
  bool strip_accents = true;         // NFD, then drop non-spacing marks
  bool lowercase = true;
};

// Normalizes s into out (overwritten). Invalid UTF-8 bytes count as U+FFFD.
void bert_normalize(std::string_view s, const BertNormalizerOptions& opt, std::string& out);

// Appends the words of s to out (views into s): split on whitespace, which is dropped, and
// around each punctuation character, which becomes a word of its own.
void bert_pre_tokenize(std::string_view s, std::vector<std::string_view>& out);

}  // namespace minnow
