// Text forms of values, byte-identical to what Python prints: str() for {{ }}
// output, repr() inside containers, and transformers' tojson (json.dumps with
// ensure_ascii=False).
#pragma once
#include <string>

#include "chat/jinja/value.hpp"

namespace minnow::chat::jinja {

std::string to_str(const Value& v);   // Python str(); Undefined prints as ""
std::string to_repr(const Value& v);  // Python repr()
std::string format_float(double d);   // Python float repr: shortest round-trip digits
std::string quote_py_string(const std::string& s);

struct JsonStyle {
  int indent = -1;  // < 0: single line
  bool sort_keys = false;
  bool ensure_ascii = false;  // non-ASCII as \uXXXX escapes (surrogate pairs beyond the BMP)
  // Python's separators; without them (", ", ": "), or ("," ": ") when indenting.
  bool custom_separators = false;
  std::string item_sep, key_sep;
};
// Throws EvalError for values JSON cannot hold (undefined, callables, namespaces).
std::string to_json(const Value& v, const JsonStyle& style);

}  // namespace minnow::chat::jinja
