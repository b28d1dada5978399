// Functions every template can call, as transformers' chat template
// environment provides them.
#include <map>

#include "chat/jinja/builtins.hpp"
#include "chat/jinja/error.hpp"
#include "chat/jinja/value_format.hpp"

namespace minnow::chat::jinja {
namespace {

// jinja2's sandbox refuses ranges longer than this.
constexpr std::int64_t kMaxRange = 100000;

Value range_fn(CallArgs& args) {
  if (!args.keyword.empty()) throw EvalError("range() takes no keyword arguments");
  const auto& p = args.positional;
  if (p.empty() || p.size() > 3) throw EvalError("range expected 1 to 3 arguments, got " + std::to_string(p.size()));
  for (const auto& v : p) {
    if (!v.is_int() && !v.is_bool()) throw EvalError("'" + type_name(v) + "' object cannot be interpreted as an integer");
  }
  const std::int64_t start = p.size() == 1 ? 0 : p[0].int_value();
  const std::int64_t stop = p.size() == 1 ? p[0].int_value() : p[1].int_value();
  const std::int64_t step = p.size() == 3 ? p[2].int_value() : 1;
  if (step == 0) throw EvalError("range() arg 3 must not be zero");
  std::vector<Value> out;
  // Compare before stepping so that no value ever overflows.
  for (std::int64_t i = start; step > 0 ? i < stop : i > stop;) {
    if (static_cast<std::int64_t>(out.size()) >= kMaxRange) {
      throw EvalError("Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).");
    }
    out.emplace_back(i);
    if (step > 0 ? stop - i <= step : i - stop <= -step) break;
    i += step;
  }
  return Value::list(std::move(out));
}

// Keyword arguments (and an optional dict positional) as dict entries.
std::vector<std::pair<std::string, Value>> mapping_args(CallArgs& args, const char* fn) {
  std::vector<std::pair<std::string, Value>> items;
  if (args.positional.size() > 1) throw EvalError(std::string(fn) + "() takes at most 1 positional argument");
  if (args.positional.size() == 1) {
    const Value& m = args.positional[0];
    if (!m.is_dict() || m.is_namespace()) throw EvalError(std::string(fn) + "() argument must be a dict");
    items = m.dict_obj().items;
  }
  for (auto& kv : args.keyword) items.push_back(kv);
  return items;
}

Value namespace_fn(CallArgs& args) {
  auto items = mapping_args(args, "namespace");
  for (const auto& [k, v] : items) {
    if (!fits_in_namespace(v)) throw EvalError("namespace attributes cannot hold namespaces or functions");
  }
  return Value::dict(std::move(items), true);
}

Value raise_exception_fn(CallArgs& args) {
  // transformers raises TemplateError(message); the message is the whole point.
  const std::string msg = args.positional.empty() ? std::string() : to_str(args.positional[0]);
  throw EvalError(msg);
}

const std::map<std::string, Value, std::less<>>& globals() {
  static const std::map<std::string, Value, std::less<>> table = {
      {"range", Value::callable("range", range_fn)},
      {"namespace", Value::callable("namespace", namespace_fn)},
      {"dict", Value::callable("dict", [](CallArgs& a) { return Value::dict(mapping_args(a, "dict")); })},
      {"raise_exception", Value::callable("raise_exception", raise_exception_fn)},
  };
  return table;
}

}  // namespace

const Value* find_global(std::string_view name) {
  const auto& table = globals();
  const auto it = table.find(name);
  return it == table.end() ? nullptr : &it->second;
}

}  // namespace minnow::chat::jinja
