#include "chat/jinja/methods.hpp"

#include <algorithm>

#include "chat/jinja/builtins.hpp"
#include "chat/jinja/error.hpp"
#include "chat/jinja/operators.hpp"
#include "chat/jinja/str_ops.hpp"
#include "chat/jinja/utf8.hpp"
#include "chat/jinja/value_format.hpp"

namespace minnow::chat::jinja {
namespace {

using StrMethod = Value (*)(const std::string& self, ArgReader& args);

// An optional string argument where Python also accepts None.
std::optional<std::string> opt_string(ArgReader& r, std::size_t index, std::string_view name) {
  const Value* v = r.get(index, name);
  if (v == nullptr || v->is_none()) return std::nullopt;
  if (!v->is_string()) throw EvalError(std::string(r.fn) + "() argument must be str or None, not " + type_name(*v));
  return v->as_string();
}

std::string req_string(ArgReader& r, std::size_t index, std::string_view name) {
  const Value* v = r.get(index, name);
  if (v == nullptr) throw EvalError(std::string(r.fn) + "() missing required argument '" + std::string(name) + "'");
  if (!v->is_string()) throw EvalError(std::string(r.fn) + "() argument must be str, not " + type_name(*v));
  return v->as_string();
}

std::int64_t opt_int(ArgReader& r, std::size_t index, std::string_view name, std::int64_t fallback) {
  const Value* v = r.get(index, name);
  if (v == nullptr) return fallback;
  if (!v->is_int() && !v->is_bool()) throw EvalError(std::string(r.fn) + "() argument must be int, not " + type_name(*v));
  return v->int_value();
}

Value strip_impl(const std::string& self, ArgReader& r, bool left, bool right) {
  const auto chars = opt_string(r, 0, "chars");
  const std::string_view view = chars ? std::string_view(*chars) : std::string_view();
  return Value(py_strip(self, chars ? &view : nullptr, left, right));
}

// startswith/endswith accept one prefix or a tuple of them.
Value affix_impl(const std::string& self, ArgReader& r, bool prefix) {
  const Value* arg = r.get(0, prefix ? "prefix" : "suffix");
  if (arg == nullptr) throw EvalError(std::string(r.fn) + "() takes at least 1 argument (0 given)");
  std::vector<Value> options = arg->is_list() && arg->list_obj().is_tuple ? arg->items() : std::vector<Value>{*arg};
  for (const auto& o : options) {
    if (!o.is_string()) throw EvalError(std::string(r.fn) + "() argument must be str or a tuple of str");
    const std::string& a = o.as_string();
    if (a.size() > self.size()) continue;
    if (prefix ? self.compare(0, a.size(), a) == 0 : self.compare(self.size() - a.size(), a.size(), a) == 0) {
      return Value(true);
    }
  }
  return Value(false);
}

Value split_impl(const std::string& self, ArgReader& r, bool from_right) {
  const auto sep = opt_string(r, 0, "sep");
  const std::int64_t maxsplit = opt_int(r, 1, "maxsplit", -1);
  const std::string_view view = sep ? std::string_view(*sep) : std::string_view();
  const auto parts = from_right ? py_rsplit(self, sep ? &view : nullptr, maxsplit)
                                : py_split(self, sep ? &view : nullptr, maxsplit);
  std::vector<Value> items(parts.begin(), parts.end());
  return Value::list(std::move(items));
}

Value count_or_find(const std::string& self, ArgReader& r, int mode) {
  const std::string sub = req_string(r, 0, "sub");
  if (mode == 0) {  // count: non-overlapping occurrences; "" occurs len+1 times
    if (sub.empty()) return Value(static_cast<std::int64_t>(count_code_points(self) + 1));
    std::int64_t n = 0;
    for (std::size_t at = self.find(sub); at != std::string::npos; at = self.find(sub, at + sub.size())) ++n;
    return Value(n);
  }
  const std::size_t at = mode == 1 ? self.find(sub) : self.rfind(sub);
  if (at == std::string::npos) return Value(std::int64_t{-1});
  return Value(static_cast<std::int64_t>(count_code_points(std::string_view(self).substr(0, at))));
}

struct StrEntry {
  std::string_view name;
  StrMethod fn;
};

const StrEntry kStrMethods[] = {
    {"strip", [](const std::string& s, ArgReader& r) { return strip_impl(s, r, true, true); }},
    {"lstrip", [](const std::string& s, ArgReader& r) { return strip_impl(s, r, true, false); }},
    {"rstrip", [](const std::string& s, ArgReader& r) { return strip_impl(s, r, false, true); }},
    {"startswith", [](const std::string& s, ArgReader& r) { return affix_impl(s, r, true); }},
    {"endswith", [](const std::string& s, ArgReader& r) { return affix_impl(s, r, false); }},
    {"split", [](const std::string& s, ArgReader& r) { return split_impl(s, r, false); }},
    {"rsplit", [](const std::string& s, ArgReader& r) { return split_impl(s, r, true); }},
    {"upper", [](const std::string& s, ArgReader&) { return Value(to_upper(s)); }},
    {"lower", [](const std::string& s, ArgReader&) { return Value(to_lower(s)); }},
    {"title", [](const std::string& s, ArgReader&) { return Value(py_title(s)); }},
    {"capitalize", [](const std::string& s, ArgReader&) { return Value(py_capitalize(s)); }},
    {"count", [](const std::string& s, ArgReader& r) { return count_or_find(s, r, 0); }},
    {"find", [](const std::string& s, ArgReader& r) { return count_or_find(s, r, 1); }},
    {"rfind", [](const std::string& s, ArgReader& r) { return count_or_find(s, r, 2); }},
    {"replace",
     [](const std::string& s, ArgReader& r) {
       const std::string old = req_string(r, 0, "old"), with = req_string(r, 1, "new");
       return Value(py_replace(s, old, with, opt_int(r, 2, "count", -1)));
     }},
    {"join",
     [](const std::string& s, ArgReader& r) {
       const Value* seq = r.get(0, "iterable");
       if (seq == nullptr) throw EvalError("join() takes exactly one argument (0 given)");
       std::string out;
       bool first = true;
       for (const auto& item : iterate(*seq)) {
         if (!item.is_string()) throw EvalError("sequence item: expected str instance, " + type_name(item) + " found");
         if (!first) out += s;
         out += item.as_string();
         if (out.size() > kMaxResultSize) throw EvalError("result too large");
         first = false;
       }
       return Value(std::move(out));
     }},
};

Value dict_method(const Value& self, const std::string& name, ArgReader& r) {
  const DictObj& d = self.dict_obj();
  if (name == "get") {
    const Value* key = r.get(0, "key");
    if (key == nullptr) throw EvalError("get expected at least 1 argument, got 0");
    Value fallback = r.get_or(1, "default", Value(None{}));
    r.done();
    const Value* found = key->is_string() ? d.find(key->as_string()) : nullptr;
    return found ? *found : fallback;
  }
  r.done();
  std::vector<Value> out;
  for (const auto& [k, v] : d.items) {
    if (name == "keys") out.emplace_back(k);
    else if (name == "values") out.push_back(v);
    else out.push_back(Value::list({Value(k), v}, true));
  }
  return Value::list(std::move(out));
}

}  // namespace

std::optional<Value> find_method(const Value& obj, const std::string& name) {
  if (obj.is_string()) {
    for (const auto& m : kStrMethods) {
      if (m.name != name) continue;
      const StrMethod fn = m.fn;
      const std::string self = obj.as_string();
      return Value::callable(name, [fn, self, name](CallArgs& args) {
        ArgReader r{args, name};
        Value result = fn(self, r);
        r.done();
        return result;
      });
    }
  }
  if (obj.is_dict() && !obj.is_namespace() &&
      (name == "items" || name == "keys" || name == "values" || name == "get")) {
    return Value::callable(name, [obj, name](CallArgs& args) {
      ArgReader r{args, name};
      return dict_method(obj, name, r);
    });
  }
  return std::nullopt;
}

}  // namespace minnow::chat::jinja
