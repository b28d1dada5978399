// Attribute, item and slice access with jinja2's sandboxed lookup rules.
#include <algorithm>

#include "chat/jinja/builtins.hpp"
#include "chat/jinja/error.hpp"
#include "chat/jinja/methods.hpp"
#include "chat/jinja/operators.hpp"
#include "chat/jinja/str_ops.hpp"
#include "chat/jinja/utf8.hpp"
#include "chat/jinja/value_format.hpp"

namespace minnow::chat::jinja {
namespace {

// How jinja2 names an object in "has no attribute" messages.
std::string object_repr(const Value& v) {
  if (v.is_none()) return "None";
  return type_name(v) + " object";
}

Value missing_attr(const Value& obj, const std::string& name) {
  return Value::undefined(concat("'", object_repr(obj), "' has no attribute '", name, "'"));
}

// Python index normalization; false when out of range.
bool normalize_index(std::int64_t& i, std::size_t size) {
  const auto n = static_cast<std::int64_t>(size);
  if (i < 0) i += n;
  return i >= 0 && i < n;
}

// Clamps slice bounds the way slice.indices(len) does.
std::int64_t clamp_bound(const Value& v, std::int64_t fallback, std::int64_t len, std::int64_t lower,
                         std::int64_t upper) {
  if (v.is_none()) return fallback;
  std::int64_t i = v.int_value();
  if (i < 0) {
    i = i < -len ? lower : i + len;
    return std::max(i, lower);
  }
  return std::min(i, upper);
}

}  // namespace

Value get_attr(const Value& obj, const std::string& name) {
  require_defined(obj);
  if (auto method = find_method(obj, name)) return *method;
  if (obj.is_dict()) {
    if (const Value* v = obj.dict_obj().find(name)) return *v;
  }
  return missing_attr(obj, name);
}

Value get_item(const Value& obj, const Value& index) {
  require_defined(obj);
  const bool int_index = index.is_int() || index.is_bool();
  if (obj.is_list() && int_index) {
    std::int64_t i = index.int_value();
    if (normalize_index(i, obj.items().size())) return obj.items()[static_cast<std::size_t>(i)];
  } else if (obj.is_string() && int_index) {
    const auto offs = code_point_offsets(obj.as_string());
    std::int64_t i = index.int_value();
    if (normalize_index(i, offs.size() - 1)) {
      const auto k = static_cast<std::size_t>(i);
      return Value(obj.as_string().substr(offs[k], offs[k + 1] - offs[k]));
    }
  } else if (obj.is_dict() && !obj.is_namespace() && index.is_string()) {
    if (const Value* v = obj.dict_obj().find(index.as_string())) return *v;
  }
  // jinja2 falls back to attribute lookup for string subscripts: ns['x'], s['strip'].
  if (index.is_string()) return get_attr(obj, index.as_string());
  return Value::undefined(concat("'", object_repr(obj), "' has no element ", to_repr(index)));
}

Value get_slice(const Value& obj, const Value& start, const Value& stop, const Value& step) {
  require_defined(obj);
  // jinja2 slices with plain Python, bypassing its lenient getitem: errors here are real.
  for (const Value* part : {&start, &stop, &step}) {
    if (!part->is_none() && !part->is_int() && !part->is_bool()) {
      throw EvalError("slice indices must be integers or None or have an __index__ method");
    }
  }
  if (obj.is_dict() && !obj.is_namespace()) throw EvalError("unhashable type: 'slice'");
  if (!obj.is_list() && !obj.is_string()) throw EvalError("'" + type_name(obj) + "' object is not subscriptable");
  std::int64_t st = step.is_none() ? 1 : step.int_value();
  if (st == 0) throw EvalError("slice step cannot be zero");
  st = std::max(st, -INT64_MAX);

  const bool is_str = obj.is_string();
  const std::vector<std::size_t> offs = is_str ? code_point_offsets(obj.as_string()) : std::vector<std::size_t>{};
  const auto len = static_cast<std::int64_t>(is_str ? offs.size() - 1 : obj.items().size());
  const std::int64_t lower = st > 0 ? 0 : -1, upper = st > 0 ? len : len - 1;
  const std::int64_t from = clamp_bound(start, st > 0 ? lower : upper, len, lower, upper);
  const std::int64_t to = clamp_bound(stop, st > 0 ? upper : lower, len, lower, upper);

  std::int64_t count = 0;
  if (st > 0 && from < to) count = (to - from - 1) / st + 1;
  if (st < 0 && from > to) count = (from - to - 1) / (-st) + 1;

  if (is_str) {
    const std::string& s = obj.as_string();
    std::string out;
    for (std::int64_t k = 0; k < count; ++k) {
      const auto i = static_cast<std::size_t>(from + k * st);
      out.append(s, offs[i], offs[i + 1] - offs[i]);
    }
    return Value(std::move(out));
  }
  std::vector<Value> out;
  out.reserve(static_cast<std::size_t>(count));
  for (std::int64_t k = 0; k < count; ++k) out.push_back(obj.items()[static_cast<std::size_t>(from + k * st)]);
  return Value::list(std::move(out), obj.list_obj().is_tuple);
}

}  // namespace minnow::chat::jinja
