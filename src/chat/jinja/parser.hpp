// Parses a token stream into a template body (recursive descent, following the
// grammar and operator precedence of jinja2's parser).
#pragma once
#include <string_view>
#include <vector>

#include "chat/jinja/ast.hpp"
#include "chat/jinja/token.hpp"

namespace minnow::chat::jinja {

// source is the normalized text the tokens point into, for error locations.
// Throws minnow::Error naming line and column on any syntax error, unknown tag,
// filter or test, and on nesting deeper than kMaxDepth.
Body parse_template(std::string_view source, const std::vector<Token>& tokens);

}  // namespace minnow::chat::jinja
