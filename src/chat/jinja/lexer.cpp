#include "chat/jinja/lexer.hpp"

#include <cctype>
#include <cstdint>

#include "chat/jinja/error.hpp"
#include "chat/jinja/utf8.hpp"

namespace minnow::chat::jinja {

std::string normalize_source(std::string_view source) {
  std::string out;
  out.reserve(source.size());
  for (std::size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '\r') {
      out += '\n';
      if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
    } else {
      out += source[i];
    }
  }
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
// Python identifiers may use non-ASCII letters; any non-ASCII byte is taken as
// part of a name (whitespace outside ASCII is checked before names are).
bool is_name_start(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || static_cast<unsigned char>(c) >= 0x80;
}
bool is_name_char(char c) { return is_name_start(c) || is_digit(c); }

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Operators, longest first so that "//" wins over "/".
constexpr std::string_view kOperators[] = {"//", "**", "==", "!=", ">=", "<=", "+", "-", "/", "*", "%",
                                           "~",  "[",  "]",  "(",  ")",  "{",  "}", ">", "<", "=", ".",
                                           ":",  "|",  ",",  ";"};

class Lexer {
 public:
  explicit Lexer(std::string_view src) : src_(src) {}

  std::vector<Token> run() {
    while (pos_ < src_.size()) {
      const std::size_t tag = find_tag_start(pos_);
      if (tag == std::string_view::npos) {
        push(TokenType::Data, std::string(src_.substr(pos_)), pos_);
        break;
      }
      const char kind = src_[tag + 1];
      std::size_t after = tag + 2;
      char sign = 0;
      if (after < src_.size() && (src_[after] == '-' || src_[after] == '+')) sign = src_[after++];
      const std::size_t raw_end = kind == '%' ? match_raw_begin(after) : std::string_view::npos;

      push_data(src_.substr(pos_, tag - pos_), pos_, sign, kind == '{');
      if (raw_end != std::string_view::npos) {
        advance_to(raw_end);
        lex_raw_body(tag);
      } else {
        advance_to(after);
        if (kind == '#') {
          lex_comment(tag);
        } else {
          lex_tag(tag, kind == '%');
        }
      }
    }
    push(TokenType::Eof, "", src_.size());
    return std::move(out_);
  }

 private:
  [[noreturn]] void fail(std::size_t pos, const std::string& what) const { throw_at(src_, pos, what); }

  void push(TokenType type, std::string value, std::size_t pos) {
    out_.push_back(Token{type, std::move(value), pos});
  }

  // Every matched piece of the source sets whether the next text starts a line:
  // lstrip_blocks strips indentation before a tag at the start of a line.
  void advance_to(std::size_t end) {
    pos_ = end;
    line_starting_ = end > 0 && src_[end - 1] == '\n';
  }

  bool starts_with(std::size_t at, std::string_view s) const { return src_.substr(at, s.size()) == s; }

  std::size_t skip_space(std::size_t i) const {
    while (i < src_.size()) {
      std::size_t j = i;
      if (!is_py_space(next_code_point(src_, j))) break;
      i = j;
    }
    return i;
  }

  std::size_t find_tag_start(std::size_t from) const {
    for (std::size_t i = src_.find('{', from); i != std::string_view::npos; i = src_.find('{', i + 1)) {
      if (i + 1 < src_.size() && (src_[i + 1] == '{' || src_[i + 1] == '%' || src_[i + 1] == '#')) return i;
    }
    return std::string_view::npos;
  }

  // "{%-" strips all whitespace before the tag; otherwise block and comment tags
  // (not {{ }}) strip spaces and tabs back to the start of their line, unless "+".
  void push_data(std::string_view text, std::size_t pos, char sign, bool is_variable) {
    if (sign == '-') {
      text = py_strip(text, nullptr, false, true);
    } else if (sign != '+' && !is_variable) {
      const std::size_t nl = text.rfind('\n');
      const std::size_t line = nl == std::string_view::npos ? 0 : nl + 1;
      if ((line > 0 || line_starting_) && py_strip(text.substr(line), nullptr, true, false).empty()) {
        text = text.substr(0, line);
      }
    }
    if (!text.empty()) push(TokenType::Data, std::string(text), pos);
  }

  // "{% raw %}" (whitespace and "-" allowed); returns the end, or npos.
  std::size_t match_raw_begin(std::size_t i) const {
    i = skip_space(i);
    if (!starts_with(i, "raw")) return std::string_view::npos;
    i = skip_space(i + 3);
    if (starts_with(i, "-%}")) return skip_space(i + 3);
    if (starts_with(i, "%}")) return i + 2;  // no trim_blocks newline here, as in jinja2
    return std::string_view::npos;
  }

  // Matches "{% endraw %}" with any whitespace control at i; returns its end.
  std::size_t match_endraw(std::size_t i, char& sign) const {
    if (!starts_with(i, "{%")) return std::string_view::npos;
    i += 2;
    sign = 0;
    if (i < src_.size() && (src_[i] == '-' || src_[i] == '+')) sign = src_[i++];
    i = skip_space(i);
    if (!starts_with(i, "endraw")) return std::string_view::npos;
    return match_block_end(skip_space(i + 6));
  }

  // "+%}", "-%}" plus following whitespace, or "%}" plus one newline (trim_blocks).
  std::size_t match_block_end(std::size_t i) const {
    if (starts_with(i, "+%}")) return i + 3;
    if (starts_with(i, "-%}")) return skip_space(i + 3);
    if (starts_with(i, "%}")) return i + 2 + (starts_with(i + 2, "\n") ? 1 : 0);
    return std::string_view::npos;
  }

  void lex_raw_body(std::size_t tag) {
    for (std::size_t i = src_.find("{%", pos_); i != std::string_view::npos; i = src_.find("{%", i + 1)) {
      char sign = 0;
      const std::size_t end = match_endraw(i, sign);
      if (end == std::string_view::npos) continue;
      push_data(src_.substr(pos_, i - pos_), pos_, sign, false);
      advance_to(end);
      return;
    }
    fail(tag, "missing end of raw directive");
  }

  void lex_comment(std::size_t tag) {
    const std::size_t close = src_.find("#}", pos_);
    if (close == std::string_view::npos) fail(tag, "missing end of comment tag");
    const char before = close > pos_ ? src_[close - 1] : 0;
    if (before == '-') {
      advance_to(skip_space(close + 2));
    } else if (before == '+') {
      advance_to(close + 2);
    } else {
      advance_to(close + 2 + (starts_with(close + 2, "\n") ? 1 : 0));
    }
  }

  void lex_tag(std::size_t tag, bool is_block) {
    push(is_block ? TokenType::BlockBegin : TokenType::VarBegin, "", tag);
    std::string brackets;  // closers expected, innermost last
    for (;;) {
      if (pos_ >= src_.size()) fail(tag, is_block ? "unterminated tag: missing '%}'" : "unterminated tag: missing '}}'");
      // While a bracket is open, "}}" is two closing braces, as in jinja2.
      if (brackets.empty()) {
        std::size_t end = std::string_view::npos;
        if (is_block) {
          end = match_block_end(pos_);
        } else if (starts_with(pos_, "-}}")) {
          end = skip_space(pos_ + 3);
        } else if (starts_with(pos_, "}}")) {
          end = pos_ + 2;
        }
        if (end != std::string_view::npos) {
          push(is_block ? TokenType::BlockEnd : TokenType::VarEnd, "", pos_);
          advance_to(end);
          return;
        }
      }
      const std::size_t start = pos_;
      const std::size_t after_space = skip_space(pos_);
      if (after_space != pos_) {
        advance_to(after_space);
        continue;
      }
      const char c = src_[pos_];
      if (is_digit(c)) {
        lex_number();
      } else if (is_name_start(c)) {
        std::size_t end = pos_;
        while (end < src_.size() && is_name_char(src_[end])) ++end;
        push(TokenType::Name, std::string(src_.substr(pos_, end - pos_)), pos_);
        advance_to(end);
      } else if (c == '\'' || c == '"') {
        lex_string();
      } else {
        lex_operator(brackets);
      }
      if (pos_ == start) fail(pos_, "unexpected char");  // defensive: always make progress
    }
  }

  // Digits with optional single underscores between them; returns the end.
  std::size_t scan_digits(std::size_t i, std::string& out) const {
    if (i >= src_.size() || !is_digit(src_[i])) return std::string_view::npos;
    while (i < src_.size()) {
      if (is_digit(src_[i])) {
        out += src_[i++];
      } else if (src_[i] == '_' && i + 1 < src_.size() && is_digit(src_[i + 1])) {
        ++i;
      } else {
        break;
      }
    }
    return i;
  }

  void lex_number() {
    const std::size_t start = pos_;
    // Floats: digits then ".digits", an exponent, or both; never right after ".",
    // so that "a.0.1" reads as attribute lookups.
    if (start == 0 || src_[start - 1] != '.') {
      std::string text;
      std::size_t i = scan_digits(start, text);
      bool is_float = false;
      if (starts_with(i, ".") && i + 1 < src_.size() && is_digit(src_[i + 1])) {
        text += '.';
        i = scan_digits(i + 1, text);
        is_float = true;
      }
      if (i < src_.size() && (src_[i] == 'e' || src_[i] == 'E')) {
        std::string exp = "e";
        std::size_t j = i + 1;
        if (j < src_.size() && (src_[j] == '+' || src_[j] == '-')) exp += src_[j++];
        const std::size_t k = scan_digits(j, exp);
        if (k != std::string_view::npos) {
          text += exp;
          i = k;
          is_float = true;
        }
      }
      if (is_float) {
        push(TokenType::Float, text, start);
        advance_to(i);
        return;
      }
    }
    lex_integer();
  }

  // Python-style integers: 0b/0o/0x prefixes, single underscores between digits,
  // and decimal literals that start with 0 only when they are all zeros.
  void lex_integer() {
    const std::size_t start = pos_;
    int base = 10;
    if (src_[start] == '0' && start + 1 < src_.size()) {
      const char p = static_cast<char>(std::tolower(static_cast<unsigned char>(src_[start + 1])));
      base = p == 'b' ? 2 : p == 'o' ? 8 : p == 'x' ? 16 : 10;
    }
    auto accepts = [&](char c) {
      const int d = hex_digit(c);
      if (base == 10) return is_digit(c) && (src_[start] != '0' || c == '0');
      return d >= 0 && d < base;
    };
    std::string digits;
    std::size_t i = start + 2;
    if (base != 10) {
      i = scan_underscored(i, accepts, digits);
      if (digits.empty()) base = 10;  // "0x" with no digits lexes as 0 then a name
    }
    if (base == 10) {
      digits = std::string(1, src_[start]);
      i = scan_underscored(start + 1, accepts, digits);
    }
    std::uint64_t value = 0;
    for (const char c : digits) {
      const auto d = static_cast<std::uint64_t>(hex_digit(c));
      if (value > (static_cast<std::uint64_t>(INT64_MAX) - d) / static_cast<std::uint64_t>(base)) {
        fail(start, "integer literal too large");
      }
      value = value * static_cast<std::uint64_t>(base) + d;
    }
    push(TokenType::Integer, std::to_string(value), start);
    advance_to(i);
  }

  // Repeats (_?digit) while accepts(digit); appends the digits, returns the end.
  template <typename Accepts>
  std::size_t scan_underscored(std::size_t i, Accepts accepts, std::string& digits) const {
    for (;;) {
      std::size_t k = i;
      if (k < src_.size() && src_[k] == '_') ++k;
      if (k >= src_.size() || !accepts(src_[k])) return i;
      digits += src_[k];
      i = k + 1;
    }
  }

  void lex_string() {
    const std::size_t start = pos_;
    const char quote = src_[start];
    std::size_t i = start + 1;
    while (i < src_.size() && src_[i] != quote) i += src_[i] == '\\' ? 2 : 1;
    if (i >= src_.size()) fail(start, "unterminated string literal");
    push(TokenType::String, decode_escapes(start + 1, i), start);
    advance_to(i + 1);
  }

  // Python's unicode-escape decoding, which jinja2 applies to string literals.
  std::string decode_escapes(std::size_t begin, std::size_t end) const {
    std::string out;
    std::size_t i = begin;
    while (i < end) {
      if (src_[i] != '\\') {
        out += src_[i++];
        continue;
      }
      const std::size_t esc = i;
      const char c = src_[i + 1];
      i += 2;
      switch (c) {
        case '\n': break;
        case '\\': out += '\\'; break;
        case '\'': out += '\''; break;
        case '"': out += '"'; break;
        case 'a': out += '\a'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'v': out += '\v'; break;
        case 'x':
        case 'u':
        case 'U': {
          const int len = c == 'x' ? 2 : c == 'u' ? 4 : 8;
          char32_t cp = 0;
          for (int k = 0; k < len; ++k, ++i) {
            if (i >= end || hex_digit(src_[i]) < 0) fail(esc, "truncated \\" + std::string(1, c) + " escape");
            cp = cp * 16 + static_cast<char32_t>(hex_digit(src_[i]));
          }
          if (cp > 0x10FFFF) fail(esc, "illegal Unicode character in escape");
          append_utf8(out, cp);
          break;
        }
        default:
          if (c >= '0' && c <= '7') {
            char32_t cp = static_cast<char32_t>(c - '0');
            for (int k = 0; k < 2 && i < end && src_[i] >= '0' && src_[i] <= '7'; ++k, ++i) {
              cp = cp * 8 + static_cast<char32_t>(src_[i] - '0');
            }
            append_utf8(out, cp);
          } else if (static_cast<unsigned char>(c) >= 0x80) {
            // jinja2 first turns non-ASCII into \x/\u escapes, so "\é" ends up as "\xe9".
            std::size_t j = esc + 1;
            const char32_t cp = next_code_point(src_, j);
            i = j;
            char buf[16];
            std::snprintf(buf, sizeof buf, cp <= 0xFF ? "\\x%02x" : cp <= 0xFFFF ? "\\u%04x" : "\\U%08x",
                          static_cast<unsigned>(cp));
            out += buf;
          } else {
            out += '\\';  // unknown escapes stay as written
            out += c;
          }
      }
    }
    return out;
  }

  void lex_operator(std::string& brackets) {
    for (const std::string_view op : kOperators) {
      if (!starts_with(pos_, op)) continue;
      const char c = op[0];
      if (op.size() == 1 && (c == '(' || c == '[' || c == '{')) {
        if (brackets.size() >= static_cast<std::size_t>(kMaxDepth)) fail(pos_, "brackets nested too deeply");
        brackets += c == '(' ? ')' : c == '[' ? ']' : '}';
      } else if (op.size() == 1 && (c == ')' || c == ']' || c == '}')) {
        if (brackets.empty()) fail(pos_, "unexpected '" + std::string(op) + "'");
        if (brackets.back() != c) {
          fail(pos_, "unexpected '" + std::string(op) + "', expected '" + std::string(1, brackets.back()) + "'");
        }
        brackets.pop_back();
      }
      push(TokenType::Operator, std::string(op), pos_);
      advance_to(pos_ + op.size());
      return;
    }
    std::size_t j = pos_;
    std::string ch;
    append_utf8(ch, next_code_point(src_, j));
    fail(pos_, "unexpected char '" + ch + "'");
  }

  std::string_view src_;
  std::size_t pos_ = 0;
  bool line_starting_ = true;
  std::vector<Token> out_;
};

}  // namespace

std::vector<Token> tokenize(std::string_view source) { return Lexer(source).run(); }

}  // namespace minnow::chat::jinja
