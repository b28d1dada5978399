#include "chat/jinja/value.hpp"

#include <algorithm>
#include <unordered_set>

#include "chat/jinja/error.hpp"

namespace minnow::chat::jinja {

const Value* DictObj::find(std::string_view key) const {
  for (const auto& [k, v] : items) {
    if (k == key) return &v;
  }
  return nullptr;
}

void DictObj::set(std::string key, Value v) {
  for (auto& [k, old] : items) {
    if (k == key) {
      old = std::move(v);
      return;
    }
  }
  items.emplace_back(std::move(key), std::move(v));
}

Value Value::undefined(std::string hint) {
  Value v;
  v.data_ = Undefined{std::move(hint)};
  return v;
}

namespace {

int check_depth(int depth) {
  if (depth > kMaxDepth) throw EvalError("value nested too deeply");
  return depth;
}

}  // namespace

Value Value::list(std::vector<Value> items, bool is_tuple) {
  int depth = 0;
  for (const auto& item : items) depth = std::max(depth, item.depth());
  auto obj = std::make_shared<ListObj>();
  obj->items = std::move(items);
  obj->is_tuple = is_tuple;
  obj->depth = check_depth(depth + 1);
  Value v;
  v.data_ = std::shared_ptr<const ListObj>(std::move(obj));
  return v;
}

Value Value::dict(std::vector<std::pair<std::string, Value>> items, bool is_namespace) {
  auto obj = std::make_shared<DictObj>();
  int depth = 0;
  for (auto& [k, item] : items) {
    depth = std::max(depth, item.depth());
    obj->set(std::move(k), std::move(item));  // later duplicates win, as in Python
  }
  obj->is_namespace = is_namespace;
  obj->depth = check_depth(depth + 1);
  Value v;
  v.data_ = std::move(obj);
  return v;
}

Value Value::callable(std::string name, std::function<Value(CallArgs&)> fn) {
  Value v;
  v.data_ = std::make_shared<const Callable>(Callable{std::move(name), std::move(fn)});
  return v;
}

double Value::number_as_double() const {
  return is_float() ? as_float() : static_cast<double>(int_value());
}

int Value::depth() const {
  if (is_list()) return list_obj().depth;
  if (is_dict()) return dict_obj().depth;
  return 0;
}

bool Value::truthy() const {
  switch (kind()) {
    case Kind::Undefined:
    case Kind::None: return false;
    case Kind::Bool: return as_bool();
    case Kind::Int: return as_int() != 0;
    case Kind::Float: return as_float() != 0.0;
    case Kind::String: return !as_string().empty();
    case Kind::List: return !items().empty();
    case Kind::Dict: return dict_obj().is_namespace || !dict_obj().items.empty();
    case Kind::Callable: return true;
  }
  return false;
}

const void* Value::object_id() const {
  if (is_list()) return &list_obj();
  if (is_dict()) return &dict_obj();
  if (is_callable()) return &callable_obj();
  return nullptr;
}

std::string type_name(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::Undefined: return "Undefined";
    case Value::Kind::None: return "NoneType";
    case Value::Kind::Bool: return "bool";
    case Value::Kind::Int: return "int";
    case Value::Kind::Float: return "float";
    case Value::Kind::String: return "str";
    case Value::Kind::List: return v.list_obj().is_tuple ? "tuple" : "list";
    case Value::Kind::Dict: return v.is_namespace() ? "Namespace" : "dict";
    case Value::Kind::Callable: return "function";
  }
  return "object";
}

namespace {

// Shared lists can nest one list in itself many times over (a tower of [x, x]): visiting
// it node by node takes exponential time, so walks are bounded by a node budget.
constexpr std::size_t kMaxNodesVisited = 1'000'000;

void spend(std::size_t& budget) {
  if (budget-- == 0) throw EvalError("value too large to compare");
}

bool equal_within(const Value& a, const Value& b, std::size_t& budget) {
  using K = Value::Kind;
  spend(budget);
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) return a.number_as_double() == b.number_as_double();
    return a.int_value() == b.int_value();
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case K::Undefined:
    case K::None: return true;
    case K::String: return a.as_string() == b.as_string();
    case K::List: {
      const auto &x = a.list_obj(), &y = b.list_obj();
      if (&x == &y) return true;  // Python compares list items by identity first
      if (x.is_tuple != y.is_tuple || x.items.size() != y.items.size()) return false;
      for (std::size_t i = 0; i < x.items.size(); ++i) {
        if (!equal_within(x.items[i], y.items[i], budget)) return false;
      }
      return true;
    }
    case K::Dict: {
      const auto &x = a.dict_obj(), &y = b.dict_obj();
      if (x.is_namespace || y.is_namespace) return &x == &y;  // Namespace compares by identity
      if (&x == &y) return true;
      if (x.items.size() != y.items.size()) return false;
      for (const auto& [k, v] : x.items) {
        const Value* other = y.find(k);
        if (other == nullptr || !equal_within(v, *other, budget)) return false;
      }
      return true;
    }
    default: return a.object_id() == b.object_id();
  }
}

bool fits_within(const Value& v, std::unordered_set<const void*>& seen) {
  if (v.is_callable() || v.is_namespace()) return false;
  if (!v.is_list() && !v.is_dict()) return true;
  if (!seen.insert(v.object_id()).second) return true;  // immutable: checked once is enough
  if (v.is_list()) {
    for (const auto& item : v.items()) {
      if (!fits_within(item, seen)) return false;
    }
    return true;
  }
  for (const auto& [k, item] : v.dict_obj().items) {
    if (!fits_within(item, seen)) return false;
  }
  return true;
}

}  // namespace

bool values_equal(const Value& a, const Value& b) {
  std::size_t budget = kMaxNodesVisited;
  return equal_within(a, b, budget);
}

bool fits_in_namespace(const Value& v) {
  std::unordered_set<const void*> seen;
  return fits_within(v, seen);
}

}  // namespace minnow::chat::jinja
