// Splits template source into tokens, applying whitespace control the way
// transformers' jinja2 environment does (trim_blocks=True, lstrip_blocks=True).
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "chat/jinja/token.hpp"

namespace minnow::chat::jinja {

// Python jinja2 turns \r\n and \r into \n and drops one trailing newline
// (keep_trailing_newline=False) before lexing; token offsets refer to this text.
std::string normalize_source(std::string_view source);

// Tokenizes normalized source. Throws minnow::Error naming line and column on
// unterminated tags, comments or strings and on characters that start no token.
std::vector<Token> tokenize(std::string_view source);

}  // namespace minnow::chat::jinja
