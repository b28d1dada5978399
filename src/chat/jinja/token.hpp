// Tokens produced by the lexer and consumed by the parser.
#pragma once
#include <cstddef>
#include <string>

namespace minnow::chat::jinja {

enum class TokenType {
  Data,         // literal template text, whitespace control already applied
  VarBegin,     // {{
  VarEnd,       // }}
  BlockBegin,   // {%
  BlockEnd,     // %}
  Name,
  String,       // value holds the decoded string
  Integer,      // value holds the digits (underscores removed)
  Float,
  Operator,     // value holds the operator text: "+", "//", "==", "(", ...
  Eof,
};

struct Token {
  TokenType type;
  std::string value;
  std::size_t pos;  // byte offset into the normalized source
};

}  // namespace minnow::chat::jinja
