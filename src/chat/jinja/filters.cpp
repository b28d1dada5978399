// Jinja filters ("x | trim", "x | default('y')", ...), with jinja2's behaviour
// and transformers' tojson.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>

#include "chat/jinja/builtins.hpp"
#include "chat/jinja/error.hpp"
#include "chat/jinja/operators.hpp"
#include "chat/jinja/str_ops.hpp"
#include "chat/jinja/utf8.hpp"
#include "chat/jinja/value_format.hpp"

namespace minnow::chat::jinja {
namespace {

// Filters whose whole behaviour is a function of the input's str().
template <std::string (*Fn)(std::string_view)>
Value text_filter(const Value& v, CallArgs& args) {
  ArgReader(args, "filter").done();
  return Value(Fn(to_str(v)));
}

std::string upper_fn(std::string_view s) { return to_upper(s); }
std::string lower_fn(std::string_view s) { return to_lower(s); }
std::string capitalize_fn(std::string_view s) { return py_capitalize(s); }

// jinja2's title filter: capitalize after runs of whitespace, "-", and opening
// brackets (not after every uncased character like str.title()).
std::string title_fn(std::string_view s) {
  std::string out;
  bool at_word_start = true;
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t start = i;
    const char32_t cp = next_code_point(s, i);
    const std::string_view ch = s.substr(start, i - start);
    const bool sep = is_py_space(cp) || cp == '-' || cp == '(' || cp == '{' || cp == '[' || cp == '<';
    out += sep ? std::string(ch) : at_word_start ? to_upper(ch) : to_lower(ch);
    at_word_start = sep;
  }
  return out;
}

Value trim_filter(const Value& v, CallArgs& args) {
  ArgReader r(args, "trim");
  const Value chars = r.get_or(0, "chars", Value(None{}));
  r.done();
  const std::string s = to_str(v);
  if (chars.is_none()) return Value(py_strip(s, nullptr, true, true));
  const std::string set = to_str(chars);
  const std::string_view view(set);
  return Value(py_strip(s, &view, true, true));
}

Value default_filter(const Value& v, CallArgs& args) {
  ArgReader r(args, "default");
  Value fallback = r.get_or(0, "default_value", Value(""));
  const bool boolean = r.get_or(1, "boolean", Value(false)).truthy();
  r.done();
  if (v.is_undefined() || (boolean && !v.truthy())) return fallback;
  return v;
}

Value length_filter(const Value& v, CallArgs& args) {
  ArgReader(args, "length").done();
  return Value(static_cast<std::int64_t>(length_of(v)));
}

Value string_filter(const Value& v, CallArgs& args) {
  ArgReader(args, "string").done();
  return Value(to_str(v));
}

Value list_filter(const Value& v, CallArgs& args) {
  ArgReader(args, "list").done();
  return Value::list(iterate(v));
}

// Item lookup along "a.b.0" as jinja2's attribute= arguments do.
Value attribute_path(const Value& item, const Value& path) {
  if (path.is_int()) return get_item(item, path);
  const std::string p = to_str(path);
  Value cur = item;
  std::size_t start = 0;
  for (;;) {
    const std::size_t dot = p.find('.', start);
    const std::string part = p.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    std::int64_t index = 0;
    const auto res = std::from_chars(part.data(), part.data() + part.size(), index);
    const bool numeric = !part.empty() && res.ec == std::errc() && res.ptr == part.data() + part.size();
    cur = get_item(cur, numeric ? Value(index) : Value(part));
    if (dot == std::string::npos) return cur;
    start = dot + 1;
  }
}

Value join_filter(const Value& v, CallArgs& args) {
  ArgReader r(args, "join");
  const std::string sep = to_str(r.get_or(0, "d", Value("")));
  const Value attribute = r.get_or(1, "attribute", Value(None{}));
  r.done();
  std::string out;
  bool first = true;
  for (const auto& item : iterate(v)) {
    if (!first) out += sep;
    out += to_str(attribute.is_none() ? item : attribute_path(item, attribute));
    if (out.size() > kMaxResultSize) throw EvalError("result too large");
    first = false;
  }
  return Value(std::move(out));
}

Value first_filter(const Value& v, CallArgs& args) {
  ArgReader(args, "first").done();
  const auto items = iterate(v);
  if (items.empty()) return Value::undefined("No first item, sequence was empty.");
  return items.front();
}

Value last_filter(const Value& v, CallArgs& args) {
  ArgReader(args, "last").done();
  const auto items = iterate(v);
  if (items.empty()) return Value::undefined("No last item, sequence was empty.");
  return items.back();
}

Value reverse_filter(const Value& v, CallArgs& args) {
  ArgReader(args, "reverse").done();
  auto items = iterate(v);
  std::reverse(items.begin(), items.end());
  if (!v.is_string()) return Value::list(std::move(items));
  std::string out;
  for (const auto& c : items) out += c.as_string();
  return Value(std::move(out));
}

// Python float() of a string: surrounding whitespace, a sign, inf/nan allowed.
bool parse_py_float(const std::string& text, double& out) {
  std::string s(py_strip(text, nullptr, true, true));
  s.erase(std::remove(s.begin(), s.end(), '_'), s.end());
  std::size_t i = s.size() > 0 && s[0] == '+' ? 1 : 0;
  const auto res = std::from_chars(s.data() + i, s.data() + s.size(), out);
  return !s.empty() && res.ptr == s.data() + s.size() && (res.ec == std::errc() || res.ec == std::errc::result_out_of_range);
}

bool parse_py_int(const std::string& text, std::int64_t& out) {
  std::string s(py_strip(text, nullptr, true, true));
  if (!s.empty() && s[0] == '+') s.erase(0, 1);
  if (s.empty() || s.find("__") != std::string::npos || s.back() == '_') return false;
  s.erase(std::remove(s.begin(), s.end(), '_'), s.end());
  const auto res = std::from_chars(s.data(), s.data() + s.size(), out);
  return res.ec == std::errc() && res.ptr == s.data() + s.size();
}

Value int_filter(const Value& v, CallArgs& args) {
  ArgReader r(args, "int");
  const Value fallback = r.get_or(0, "default", Value(0));
  r.done();
  require_defined(v);  // jinja2's Undefined refuses int()
  if (v.is_int() || v.is_bool()) return Value(v.int_value());
  double d = 0;
  if (v.is_float()) {
    d = v.as_float();
  } else if (v.is_string()) {
    std::int64_t i = 0;
    if (parse_py_int(v.as_string(), i)) return Value(i);
    if (!parse_py_float(v.as_string(), d)) return fallback;
  } else {
    return fallback;
  }
  if (std::isnan(d) || std::isinf(d) || std::fabs(d) >= 9.2e18) throw EvalError("cannot convert float to integer");
  return Value(static_cast<std::int64_t>(d));
}

Value float_filter(const Value& v, CallArgs& args) {
  ArgReader r(args, "float");
  const Value fallback = r.get_or(0, "default", Value(0.0));
  r.done();
  require_defined(v);
  if (v.is_number()) return Value(v.number_as_double());
  double d = 0;
  if (v.is_string() && parse_py_float(v.as_string(), d)) return Value(d);
  return fallback;
}

Value abs_filter(const Value& v, CallArgs& args) {
  ArgReader(args, "abs").done();
  if (v.is_float()) return Value(std::fabs(v.as_float()));
  if (v.is_int() || v.is_bool()) {
    if (v.int_value() == INT64_MIN) throw EvalError("integer overflow");
    return Value(v.int_value() < 0 ? -v.int_value() : v.int_value());
  }
  require_defined(v);
  throw EvalError("bad operand type for abs(): '" + type_name(v) + "'");
}

Value replace_filter(const Value& v, CallArgs& args) {
  ArgReader r(args, "replace");
  const Value* old = r.get(0, "old");
  const Value* with = r.get(1, "new");
  const Value count = r.get_or(2, "count", Value(None{}));
  r.done();
  if (old == nullptr || with == nullptr) throw EvalError("replace() needs 'old' and 'new'");
  const std::int64_t n = count.is_none() ? -1 : count.int_value();
  return Value(py_replace(to_str(v), to_str(*old), to_str(*with), n));
}

Value items_filter(const Value& v, CallArgs& args) {
  ArgReader(args, "items").done();
  if (v.is_undefined()) return Value::list({});
  if (!v.is_dict() || v.is_namespace()) throw EvalError("Can only get item pairs from a mapping.");
  std::vector<Value> out;
  for (const auto& [k, item] : v.dict_obj().items) out.push_back(Value::list({Value(k), item}, true));
  return Value::list(std::move(out));
}

// transformers' tojson: json.dumps(x, ensure_ascii=False, indent=indent, sort_keys=sort_keys).
Value tojson_filter(const Value& v, CallArgs& args) {
  ArgReader r(args, "tojson");
  const Value ensure_ascii = r.get_or(0, "ensure_ascii", Value(false));
  const Value indent = r.get_or(1, "indent", Value(None{}));
  const Value separators = r.get_or(2, "separators", Value(None{}));
  const Value sort_keys = r.get_or(3, "sort_keys", Value(false));
  r.done();
  JsonStyle style;
  style.ensure_ascii = ensure_ascii.truthy();
  if (!separators.is_none()) {
    const bool pair = separators.is_list() && separators.items().size() == 2 && separators.items()[0].is_string() &&
                      separators.items()[1].is_string();
    if (!pair) throw EvalError("tojson: separators must be a pair of strings");
    style.custom_separators = true;
    style.item_sep = separators.items()[0].as_string();
    style.key_sep = separators.items()[1].as_string();
  }
  if (!indent.is_none()) {
    if (!indent.is_int() || indent.as_int() < 0 || indent.as_int() > 64) throw EvalError("tojson: indent must be 0..64");
    style.indent = static_cast<int>(indent.as_int());
  }
  style.sort_keys = sort_keys.truthy();
  return Value(to_json(v, style));
}

// select/reject/selectattr/rejectattr: keep items whose test result is `keep`.
Value select_impl(const Value& v, CallArgs& args, bool by_attr, bool keep) {
  std::size_t next = 0;
  Value attr;
  if (by_attr) {
    if (args.positional.empty()) throw EvalError("selectattr/rejectattr need an attribute");
    attr = args.positional[next++];
  }
  TestFn test = nullptr;
  if (next < args.positional.size()) {
    const Value& name = args.positional[next++];
    test = name.is_string() ? find_test(name.as_string()) : nullptr;
    if (test == nullptr) throw EvalError("No test named " + to_repr(name));
  }
  CallArgs test_args;
  test_args.positional.assign(args.positional.begin() + static_cast<std::ptrdiff_t>(next), args.positional.end());
  test_args.keyword = args.keyword;
  std::vector<Value> out;
  for (const auto& item : iterate(v)) {
    const Value subject = by_attr ? attribute_path(item, attr) : item;
    CallArgs call = test_args;
    const bool passed = test ? test(subject, call) : subject.truthy();
    if (passed == keep) out.push_back(item);
  }
  return Value::list(std::move(out));
}

Value map_filter(const Value& v, CallArgs& args) {
  std::vector<Value> out;
  if (args.positional.empty()) {
    ArgReader r(args, "map");
    const Value* attribute = r.get(0, "attribute");
    const Value fallback = r.get_or(1, "default", Value());
    r.done();
    if (attribute == nullptr) throw EvalError("map() needs a filter name or attribute=");
    for (const auto& item : iterate(v)) {
      Value got = attribute_path(item, *attribute);
      out.push_back(got.is_undefined() && !fallback.is_undefined() ? fallback : got);
    }
    return Value::list(std::move(out));
  }
  const Value& name = args.positional[0];
  const FilterFn fn = name.is_string() ? find_filter(name.as_string()) : nullptr;
  if (fn == nullptr) throw EvalError("No filter named " + to_repr(name));
  CallArgs rest;
  rest.positional.assign(args.positional.begin() + 1, args.positional.end());
  rest.keyword = args.keyword;
  for (const auto& item : iterate(v)) {
    CallArgs call = rest;
    out.push_back(fn(item, call));
  }
  return Value::list(std::move(out));
}

const std::map<std::string, FilterFn, std::less<>>& filters() {
  static const std::map<std::string, FilterFn, std::less<>> table = {
      {"trim", trim_filter},
      {"upper", text_filter<upper_fn>},
      {"lower", text_filter<lower_fn>},
      {"capitalize", text_filter<capitalize_fn>},
      {"title", text_filter<title_fn>},
      {"default", default_filter},
      {"d", default_filter},
      {"length", length_filter},
      {"count", length_filter},
      {"string", string_filter},
      {"list", list_filter},
      {"join", join_filter},
      {"first", first_filter},
      {"last", last_filter},
      {"reverse", reverse_filter},
      {"int", int_filter},
      {"float", float_filter},
      {"abs", abs_filter},
      {"replace", replace_filter},
      {"items", items_filter},
      {"tojson", tojson_filter},
      {"select", [](const Value& v, CallArgs& a) { return select_impl(v, a, false, true); }},
      {"reject", [](const Value& v, CallArgs& a) { return select_impl(v, a, false, false); }},
      {"selectattr", [](const Value& v, CallArgs& a) { return select_impl(v, a, true, true); }},
      {"rejectattr", [](const Value& v, CallArgs& a) { return select_impl(v, a, true, false); }},
      {"map", map_filter},
  };
  return table;
}

}  // namespace

FilterFn find_filter(std::string_view name) {
  const auto& table = filters();
  const auto it = table.find(name);
  return it == table.end() ? nullptr : it->second;
}

}  // namespace minnow::chat::jinja
