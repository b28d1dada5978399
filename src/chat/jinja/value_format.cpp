#include "chat/jinja/value_format.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "chat/jinja/error.hpp"
#include "chat/jinja/operators.hpp"
#include "chat/jinja/utf8.hpp"

namespace minnow::chat::jinja {

std::string format_float(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d < 0 ? "-inf" : "inf";
  // Shortest round-trip digits in scientific form, e.g. "1.2345e+17", then laid
  // out the way Python's repr does: fixed notation for exponents in [-4, 16).
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, std::fabs(d), std::chars_format::scientific);
  const std::string sci(buf, res.ptr);
  const std::size_t e = sci.find('e');
  std::string digits = sci.substr(0, e);
  digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
  const int exp10 = std::stoi(sci.substr(e + 1));
  const int decpt = exp10 + 1;  // digits before the decimal point

  std::string out = std::signbit(d) ? "-" : "";
  const int n = static_cast<int>(digits.size());
  if (decpt > -4 && decpt <= 16) {
    if (decpt <= 0) {
      out += "0.";
      out.append(static_cast<std::size_t>(-decpt), '0');
      out += digits;
    } else if (decpt >= n) {
      out += digits;
      out.append(static_cast<std::size_t>(decpt - n), '0');
      out += ".0";
    } else {
      out.append(digits, 0, static_cast<std::size_t>(decpt));
      out += '.';
      out.append(digits, static_cast<std::size_t>(decpt));
    }
    return out;
  }
  out += digits.substr(0, 1);
  if (n > 1) {
    out += '.';
    out.append(digits, 1);
  }
  char exp_buf[16];
  std::snprintf(exp_buf, sizeof exp_buf, "e%c%02d", exp10 < 0 ? '-' : '+', std::abs(exp10));
  return out + exp_buf;
}

namespace {

// Python's str.isprintable() is false for controls, separators other than the
// ASCII space, format characters and private use; this covers the common ones.
bool py_printable(char32_t cp) {
  if (cp < 0x20 || (cp >= 0x7F && cp <= 0xA0) || cp == 0xAD) return false;
  if (cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200F) || (cp >= 0x2028 && cp <= 0x202F)) return false;
  if ((cp >= 0x205F && cp <= 0x206F) || cp == 0x3000 || cp == 0xFEFF) return false;
  if ((cp >= 0xD800 && cp <= 0xF8FF) || (cp >= 0xFFF9 && cp <= 0xFFFB)) return false;
  return true;
}

void append_hex_escape(std::string& out, char32_t cp) {
  char buf[16];
  if (cp <= 0xFF) {
    std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(cp));
  } else if (cp <= 0xFFFF) {
    std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(cp));
  } else {
    std::snprintf(buf, sizeof buf, "\\U%08x", static_cast<unsigned>(cp));
  }
  out += buf;
}

// Shared lists can nest the same list many times over: stop before text explodes.
void check_size(const std::string& out) {
  if (out.size() > kMaxResultSize) throw EvalError("result too large");
}

void append_joined(std::string& out, const std::vector<Value>& items) {
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) out += ", ";
    out += to_repr(items[i]);
    check_size(out);
  }
}

std::string dict_repr(const DictObj& d) {
  std::string out = "{";
  for (std::size_t i = 0; i < d.items.size(); ++i) {
    if (i) out += ", ";
    out += quote_py_string(d.items[i].first) + ": " + to_repr(d.items[i].second);
    check_size(out);
  }
  return out + "}";
}

}  // namespace

std::string quote_py_string(const std::string& s) {
  const bool has_single = s.find('\'') != std::string::npos;
  const bool has_double = s.find('"') != std::string::npos;
  const char quote = has_single && !has_double ? '"' : '\'';
  std::string out(1, quote);
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t start = i;
    const char32_t cp = next_code_point(s, i);
    if (cp == static_cast<char32_t>(quote) || cp == '\\') {
      out += '\\';
      out += static_cast<char>(cp);
    } else if (cp == '\n') {
      out += "\\n";
    } else if (cp == '\r') {
      out += "\\r";
    } else if (cp == '\t') {
      out += "\\t";
    } else if (!py_printable(cp)) {
      append_hex_escape(out, cp);
    } else {
      out.append(s, start, i - start);
    }
  }
  return out + quote;
}

std::string to_repr(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::Undefined: return "Undefined";
    case Value::Kind::String: return quote_py_string(v.as_string());
    case Value::Kind::List: {
      const ListObj& l = v.list_obj();
      std::string out = l.is_tuple ? "(" : "[";
      append_joined(out, l.items);
      if (l.is_tuple && l.items.size() == 1) out += ",";
      return out + (l.is_tuple ? ")" : "]");
    }
    case Value::Kind::Dict:
      if (v.is_namespace()) return "<Namespace " + dict_repr(v.dict_obj()) + ">";
      return dict_repr(v.dict_obj());
    default: return to_str(v);
  }
}

std::string to_str(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::Undefined: return "";
    case Value::Kind::None: return "None";
    case Value::Kind::Bool: return v.as_bool() ? "True" : "False";
    case Value::Kind::Int: return std::to_string(v.as_int());
    case Value::Kind::Float: return format_float(v.as_float());
    case Value::Kind::String: return v.as_string();
    case Value::Kind::Callable: return "<function " + v.callable_obj().name + ">";
    default: return to_repr(v);
  }
}

namespace {

void json_escape_code_point(std::string& out, char32_t cp) {
  char buf[16];
  if (cp >= 0x10000) {  // a UTF-16 surrogate pair, as Python writes it
    const char32_t v = cp - 0x10000;
    std::snprintf(buf, sizeof buf, "\\u%04x\\u%04x", static_cast<unsigned>(0xD800 + (v >> 10)),
                  static_cast<unsigned>(0xDC00 + (v & 0x3FF)));
  } else {
    std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(cp));
  }
  out += buf;
}

void json_string(std::string& out, const std::string& s, bool ensure_ascii) {
  out += '"';
  for (std::size_t i = 0; i < s.size();) {
    const char c = s[i];
    if (ensure_ascii && static_cast<unsigned char>(c) >= 0x80) {
      json_escape_code_point(out, next_code_point(s, i));
      continue;
    }
    ++i;
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

void json_value(std::string& out, const Value& v, const JsonStyle& style, int level);

// Newline and indentation before an item (or the closing bracket) when indenting.
void json_break(std::string& out, const JsonStyle& style, int level) {
  if (style.indent < 0) return;
  out += '\n';
  out.append(static_cast<std::size_t>(style.indent) * static_cast<std::size_t>(level), ' ');
}

void json_value(std::string& out, const Value& v, const JsonStyle& style, int level) {
  using sv = std::string_view;
  const sv item_sep = style.custom_separators ? sv(style.item_sep) : style.indent < 0 ? sv(", ") : sv(",");
  const sv key_sep = style.custom_separators ? sv(style.key_sep) : sv(": ");
  switch (v.kind()) {
    case Value::Kind::None: out += "null"; return;
    case Value::Kind::Bool: out += v.as_bool() ? "true" : "false"; return;
    case Value::Kind::Int: out += std::to_string(v.as_int()); return;
    case Value::Kind::Float: {
      const double d = v.as_float();
      if (std::isnan(d)) out += "NaN";
      else if (std::isinf(d)) out += d < 0 ? "-Infinity" : "Infinity";
      else out += format_float(d);
      return;
    }
    case Value::Kind::String: json_string(out, v.as_string(), style.ensure_ascii); return;
    case Value::Kind::List: {
      const auto& items = v.items();
      if (items.empty()) {
        out += "[]";
        return;
      }
      out += '[';
      for (std::size_t i = 0; i < items.size(); ++i) {
        if (i) out += item_sep;
        json_break(out, style, level + 1);
        json_value(out, items[i], style, level + 1);
        check_size(out);
      }
      json_break(out, style, level);
      out += ']';
      return;
    }
    case Value::Kind::Dict: {
      if (v.is_namespace()) break;
      std::vector<const std::pair<std::string, Value>*> entries;
      for (const auto& kv : v.dict_obj().items) entries.push_back(&kv);
      if (style.sort_keys) {
        std::sort(entries.begin(), entries.end(), [](auto* a, auto* b) { return a->first < b->first; });
      }
      if (entries.empty()) {
        out += "{}";
        return;
      }
      out += '{';
      for (std::size_t i = 0; i < entries.size(); ++i) {
        if (i) out += item_sep;
        json_break(out, style, level + 1);
        json_string(out, entries[i]->first, style.ensure_ascii);
        out += key_sep;
        json_value(out, entries[i]->second, style, level + 1);
        check_size(out);
      }
      json_break(out, style, level);
      out += '}';
      return;
    }
    default: break;
  }
  throw EvalError("Object of type " + type_name(v) + " is not JSON serializable");
}

}  // namespace

std::string to_json(const Value& v, const JsonStyle& style) {
  std::string out;
  json_value(out, v, style, 0);
  return out;
}

}  // namespace minnow::chat::jinja
