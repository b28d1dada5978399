// GBNF parser and matcher: any text must parse or throw minnow::Error; a parsed grammar
// then runs over the input's own code points without fault.
#include <memory>
#include <string_view>

#include "base/error.hpp"
#include "fuzz_target.hpp"
#include "grammar/gbnf.hpp"
#include "grammar/matcher.hpp"
#include "tokenizer/utf8.hpp"

MINNOW_FUZZ_TARGET(gbnf) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    auto g = std::make_shared<const minnow::grammar::Grammar>(minnow::grammar::parse_gbnf(text));
    minnow::grammar::Matcher m(g);
    minnow::grammar::States s = m.initial(), next;
    for (size_t i = 0; i < text.size() && !s.empty();) {
      const size_t n = minnow::utf8_valid_length(text, i);
      const uint32_t c = n ? minnow::utf8_decode(text, i, n) : static_cast<uint8_t>(text[i]);
      m.advance(s, c, next);
      std::swap(s, next);
      i += n ? n : 1;
    }
  } catch (const minnow::Error&) {
    // Rejected cleanly.
  }
}
