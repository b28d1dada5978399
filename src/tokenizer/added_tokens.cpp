#include "tokenizer/added_tokens.hpp"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <algorithm>

#include "tokenizer/utf8.hpp"

namespace minnow {
namespace {

// Unicode White_Space, the set Rust's char::is_whitespace (and so `tokenizers`) uses.
bool is_white_space(uint32_t c) {
  return (c >= 0x09 && c <= 0x0d) || c == 0x20 || c == 0x85 || c == 0xa0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 || c == 0x202f || c == 0x205f || c == 0x3000;
}

// Alphabetic or Numeric or '_': what `tokenizers` counts as part of a word for single_word.
bool is_word_char(std::string_view ch) {
  struct Class {
    pcre2_code* code;
    pcre2_match_data* md;
    Class() {
      int err = 0;
      PCRE2_SIZE off = 0;
      const char* pat = "^[\\p{Alphabetic}\\p{N}_]";
      code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pat), PCRE2_ZERO_TERMINATED, PCRE2_UTF | PCRE2_MATCH_INVALID_UTF, &err,
                           &off, nullptr);
      md = code ? pcre2_match_data_create_from_pattern(code, nullptr) : nullptr;
    }
  };
  thread_local Class cls;
  if (!cls.code) return false;
  return pcre2_match(cls.code, reinterpret_cast<PCRE2_SPTR>(ch.data()), ch.size(), 0, 0, cls.md, nullptr) >= 0;
}

// The character ending just before `end` / starting at `pos` (one byte if not valid UTF-8).
std::string_view char_before(std::string_view s, size_t end) {
  size_t b = end - 1;
  while (b > 0 && end - b < 4 && (static_cast<uint8_t>(s[b]) & 0xc0) == 0x80) --b;
  return utf8_valid_length(s, b) == end - b ? s.substr(b, end - b) : s.substr(end - 1, 1);
}
std::string_view char_at(std::string_view s, size_t pos) {
  size_t n = utf8_valid_length(s, pos);
  return s.substr(pos, n ? n : 1);
}
bool is_space_char(std::string_view ch) {
  size_t n = utf8_valid_length(ch, 0);
  return n == ch.size() && is_white_space(utf8_decode(ch, 0, n));
}

}  // namespace

AddedTokenMatcher::AddedTokenMatcher(const std::vector<AddedToken>& tokens, bool normalized) : nodes_(1) {
  for (const auto& t : tokens) {
    if (t.normalized != normalized || t.content.empty()) continue;
    int32_t node = 0;
    for (char c : t.content) {
      auto b = static_cast<uint8_t>(c);
      auto& next = nodes_[static_cast<size_t>(node)].next;
      auto it = std::lower_bound(next.begin(), next.end(), std::make_pair(b, INT32_MIN));
      if (it != next.end() && it->first == b) {
        node = it->second;
      } else {
        auto child = static_cast<int32_t>(nodes_.size());
        next.insert(it, {b, child});
        nodes_.emplace_back();  // invalidates `next`; not used after this
        node = child;
      }
    }
    // The same text twice: the first entry wins.
    if (nodes_[static_cast<size_t>(node)].token < 0) {
      nodes_[static_cast<size_t>(node)].token = static_cast<int32_t>(tokens_.size());
      tokens_.push_back(t);
    }
  }
}

std::pair<int32_t, size_t> AddedTokenMatcher::longest_at(std::string_view text, size_t pos) const {
  int32_t node = 0, best = -1;
  size_t best_len = 0;
  for (size_t i = pos; i < text.size(); ++i) {
    const auto& next = nodes_[static_cast<size_t>(node)].next;
    auto b = static_cast<uint8_t>(text[i]);
    auto it = std::lower_bound(next.begin(), next.end(), std::make_pair(b, INT32_MIN));
    if (it == next.end() || it->first != b) break;
    node = it->second;
    if (nodes_[static_cast<size_t>(node)].token >= 0) {
      best = nodes_[static_cast<size_t>(node)].token;
      best_len = i + 1 - pos;
    }
  }
  return {best, best_len};
}

void AddedTokenMatcher::split(std::string_view text, bool parse_special, FunctionRef<void(std::string_view)> on_text,
                              FunctionRef<void(int32_t)> on_token) const {
  size_t emitted = 0;  // text before this offset has been passed on
  size_t pos = 0;
  while (pos < text.size()) {
    auto [index, len] = empty() ? std::pair<int32_t, size_t>{-1, 0} : longest_at(text, pos);
    if (index < 0) {
      ++pos;
      continue;
    }
    const AddedToken& t = tokens_[static_cast<size_t>(index)];
    size_t start = pos, stop = pos + len;
    pos = stop;  // a rejected match is not searched again for shorter ones, as in `tokenizers`
    if (t.special && !parse_special) continue;
    if (t.single_word) {
      bool word_before = start > 0 && is_word_char(char_before(text, start));
      bool word_after = stop < text.size() && is_word_char(char_at(text, stop));
      if (word_before || word_after) continue;
    }
    if (t.lstrip)
      while (start > emitted) {
        auto ch = char_before(text, start);
        if (!is_space_char(ch)) break;
        start -= ch.size();
      }
    if (t.rstrip)
      while (stop < text.size()) {
        auto ch = char_at(text, stop);
        if (!is_space_char(ch)) break;
        stop += ch.size();
      }
    if (start > emitted) on_text(text.substr(emitted, start - emitted));
    on_token(t.id);
    emitted = pos = stop;
  }
  if (emitted < text.size()) on_text(text.substr(emitted));
}

}  // namespace minnow
