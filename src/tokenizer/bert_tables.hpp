// Per code point behaviour of BERT's normalizer and pre-tokenizer (generated into
// bert_tables.cpp by tests/reference/gen_bert_tables.py from the `tokenizers` package).
#pragma once
#include <cstddef>
#include <cstdint>

namespace minnow::bert {

struct CodeRange {
  uint32_t first, last;  // inclusive
};
// A code point replaced by kPool[offset .. offset + length) (UTF-8; may be empty).
struct CodeMapping {
  uint32_t cp, offset;
  uint8_t length;
};

// Sorted by code point.
extern const CodeRange kRemoved[];      // clean_text drops these (controls, formats, private use)
extern const size_t kRemovedCount;
extern const CodeRange kCleanSpace[];   // clean_text turns these into ' '
extern const size_t kCleanSpaceCount;
extern const CodeRange kChinese[];      // handle_chinese_chars puts spaces around these
extern const size_t kChineseCount;
extern const CodeRange kPunctuation[];  // BertPreTokenizer makes each of these a word
extern const size_t kPunctuationCount;
extern const CodeRange kSplitSpace[];   // BertPreTokenizer splits on (and drops) these
extern const size_t kSplitSpaceCount;
extern const CodeRange kNonspacing[];   // strip_accents drops these (Mn)
extern const size_t kNonspacingCount;
extern const CodeMapping kLowercase[];
extern const size_t kLowercaseCount;
extern const CodeMapping kStripAccents[];  // the rest of strip_accents: NFD without the marks
extern const size_t kStripAccentsCount;
extern const char kPool[];

}  // namespace minnow::bert
