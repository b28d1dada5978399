#include "tokenizer/bert_normalizer.hpp"

#include <algorithm>
#include <cstdint>

#include "tokenizer/bert_tables.hpp"
#include "tokenizer/nfc.hpp"
#include "tokenizer/utf8.hpp"

namespace minnow {
namespace {

using bert::CodeMapping;
using bert::CodeRange;

bool in(const CodeRange* table, size_t n, uint32_t cp) {
  const CodeRange* end = table + n;
  const CodeRange* it = std::upper_bound(table, end, cp, [](uint32_t c, const CodeRange& r) { return c < r.first; });
  return it != table && cp <= (it - 1)->last;
}

const CodeMapping* find(const CodeMapping* table, size_t n, uint32_t cp) {
  const CodeMapping* end = table + n;
  const CodeMapping* it = std::lower_bound(table, end, cp, [](const CodeMapping& m, uint32_t c) { return m.cp < c; });
  return it != end && it->cp == cp ? it : nullptr;
}

constexpr uint32_t kReplacement = 0xFFFD;

// The code point at s[i] and its byte length (an invalid byte is U+FFFD, one byte long).
std::pair<uint32_t, size_t> next_char(std::string_view s, size_t i) {
  size_t n = utf8_valid_length(s, i);
  return n ? std::pair{utf8_decode(s, i, n), n} : std::pair{kReplacement, size_t{1}};
}

void append_lowered(uint32_t cp, bool lowercase, std::string& out) {
  if (lowercase) {
    if (cp < 0x80) {
      out += static_cast<char>(cp >= 'A' && cp <= 'Z' ? cp + 32 : cp);
      return;
    }
    if (const CodeMapping* m = find(bert::kLowercase, bert::kLowercaseCount, cp)) {
      out.append(bert::kPool + m->offset, m->length);
      return;
    }
  }
  out += utf8_encode(cp);
}

// strip_accents then lowercase, as `tokenizers` runs them.
void append_char(uint32_t cp, const BertNormalizerOptions& opt, std::string& out) {
  if (!opt.strip_accents || cp < 0x80) return append_lowered(cp, opt.lowercase, out);
  if (in(bert::kNonspacing, bert::kNonspacingCount, cp)) return;
  if (const CodeMapping* m = find(bert::kStripAccents, bert::kStripAccentsCount, cp)) {
    std::string_view d(bert::kPool + m->offset, m->length);
    for (size_t i = 0; i < d.size();) {
      auto [c, n] = next_char(d, i);
      append_lowered(c, opt.lowercase, out);
      i += n;
    }
    return;
  }
  uint32_t jamo[3];
  int n = hangul_decompose(cp, jamo);
  if (n == 0) return append_lowered(cp, opt.lowercase, out);
  for (int i = 0; i < n; ++i) out += utf8_encode(jamo[i]);
}

}  // namespace

void bert_normalize(std::string_view s, const BertNormalizerOptions& opt, std::string& out) {
  out.clear();
  out.reserve(s.size() + s.size() / 8);
  for (size_t i = 0; i < s.size();) {
    auto [cp, n] = next_char(s, i);
    i += n;
    if (opt.clean_text) {
      if (cp == 0 || cp == kReplacement || in(bert::kRemoved, bert::kRemovedCount, cp)) continue;
      if (in(bert::kCleanSpace, bert::kCleanSpaceCount, cp)) cp = ' ';
    }
    if (opt.handle_chinese_chars && cp >= 0x3400 && in(bert::kChinese, bert::kChineseCount, cp)) {
      out += ' ';
      append_char(cp, opt, out);
      out += ' ';
      continue;
    }
    append_char(cp, opt, out);
  }
}

void bert_pre_tokenize(std::string_view s, std::vector<std::string_view>& out) {
  size_t word = 0;  // start of the current word
  for (size_t i = 0; i < s.size();) {
    auto [cp, n] = next_char(s, i);
    const bool space = in(bert::kSplitSpace, bert::kSplitSpaceCount, cp);
    if (space || in(bert::kPunctuation, bert::kPunctuationCount, cp)) {
      if (i > word) out.push_back(s.substr(word, i - word));
      if (!space) out.push_back(s.substr(i, n));
      word = i + n;
    }
    i += n;
  }
  if (s.size() > word) out.push_back(s.substr(word));
}

}  // namespace minnow
