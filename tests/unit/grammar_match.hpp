// Test helper: does a GBNF grammar match a whole UTF-8 text (every code point accepted,
// the grammar complete at the end)?
#pragma once
#include <memory>
#include <string>
#include <utility>

#include "grammar/gbnf.hpp"
#include "grammar/matcher.hpp"
#include "tokenizer/utf8.hpp"

namespace minnow::test {

inline bool grammar_matches(const std::string& gbnf, const std::string& text) {
  grammar::Matcher m(std::make_shared<const grammar::Grammar>(grammar::parse_gbnf(gbnf)));
  grammar::States s = m.initial(), next;
  for (size_t i = 0; i < text.size();) {
    const size_t n = utf8_valid_length(text, i);
    if (n == 0) return false;
    m.advance(s, utf8_decode(text, i, n), next);
    if (next.empty()) return false;
    std::swap(s, next);
    i += n;
  }
  return grammar::Matcher::can_end(s);
}

}  // namespace minnow::test
