// The template value model: Python's types as Jinja sees them. Lists and dicts are
// shared and immutable once built (the sandbox forbids mutating them); only
// namespace objects change, through {% set ns.attr = ... %}.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace minnow::chat::jinja {

class Value;

struct ListObj {
  std::vector<Value> items;
  bool is_tuple = false;
  int depth = 1;  // nesting depth, kept to bound recursion over values
};

struct DictObj {
  std::vector<std::pair<std::string, Value>> items;  // insertion order, like Python
  bool is_namespace = false;
  int depth = 1;

  const Value* find(std::string_view key) const;
  // Inserts or replaces; the caller keeps depth up to date.
  void set(std::string key, Value v);
};

struct CallArgs {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> keyword;
};

struct Callable {
  std::string name;
  std::function<Value(CallArgs&)> fn;
};

// An undefined value remembers why it is undefined, for the error raised when a
// template uses it in a way that jinja2's default Undefined refuses.
struct Undefined {
  std::string hint;
};
struct None {};

class Value {
 public:
  // Order matches the variant below.
  enum class Kind { Undefined, None, Bool, Int, Float, String, List, Dict, Callable };

  Value() = default;  // undefined
  Value(None) : data_(None{}) {}
  Value(bool b) : data_(b) {}
  Value(int i) : data_(static_cast<std::int64_t>(i)) {}
  Value(std::int64_t i) : data_(i) {}
  Value(double d) : data_(d) {}
  Value(std::string s) : data_(std::make_shared<const std::string>(std::move(s))) {}
  Value(std::string_view s) : Value(std::string(s)) {}
  Value(const char* s) : Value(std::string(s)) {}

  static Value undefined(std::string hint);
  // Throw EvalError when the result would nest deeper than kMaxDepth.
  static Value list(std::vector<Value> items, bool is_tuple = false);
  static Value dict(std::vector<std::pair<std::string, Value>> items, bool is_namespace = false);
  static Value callable(std::string name, std::function<Value(CallArgs&)> fn);

  Kind kind() const { return static_cast<Kind>(data_.index()); }
  bool is_undefined() const { return kind() == Kind::Undefined; }
  bool is_none() const { return kind() == Kind::None; }
  bool is_bool() const { return kind() == Kind::Bool; }
  bool is_int() const { return kind() == Kind::Int; }
  bool is_float() const { return kind() == Kind::Float; }
  bool is_string() const { return kind() == Kind::String; }
  bool is_list() const { return kind() == Kind::List; }
  bool is_dict() const { return kind() == Kind::Dict; }
  bool is_callable() const { return kind() == Kind::Callable; }
  // Python's numbers.Number: bool counts, as it does in jinja's "is number".
  bool is_number() const { return is_bool() || is_int() || is_float(); }
  bool is_namespace() const { return is_dict() && dict_obj().is_namespace; }

  bool as_bool() const { return std::get<bool>(data_); }
  std::int64_t as_int() const { return std::get<std::int64_t>(data_); }
  double as_float() const { return std::get<double>(data_); }
  const std::string& as_string() const { return *std::get<std::shared_ptr<const std::string>>(data_); }
  const ListObj& list_obj() const { return *std::get<std::shared_ptr<const ListObj>>(data_); }
  const std::vector<Value>& items() const { return list_obj().items; }
  const DictObj& dict_obj() const { return *std::get<std::shared_ptr<DictObj>>(data_); }
  DictObj& mutable_dict() const { return *std::get<std::shared_ptr<DictObj>>(data_); }
  const Callable& callable_obj() const { return *std::get<std::shared_ptr<const Callable>>(data_); }
  const std::string& undefined_hint() const { return std::get<Undefined>(data_).hint; }

  // bool and int as int64, for arithmetic (True + 1 == 2 in Python).
  std::int64_t int_value() const { return is_bool() ? (as_bool() ? 1 : 0) : as_int(); }
  double number_as_double() const;

  int depth() const;
  bool truthy() const;
  // Identity of shared objects, for "is sameas" and namespace cycle checks.
  const void* object_id() const;

 private:
  // Strings are shared like lists: copying a value never copies its text, so
  // lists holding one long string many times stay small.
  std::variant<Undefined, None, bool, std::int64_t, double, std::shared_ptr<const std::string>,
               std::shared_ptr<const ListObj>,
               std::shared_ptr<DictObj>, std::shared_ptr<const Callable>>
      data_;
};

// Python's type name, for error messages ("str", "int", "list", ...).
std::string type_name(const Value& v);

// Python ==, with jinja's Undefined equal only to another Undefined.
bool values_equal(const Value& a, const Value& b);

// Namespaces must not hold namespaces or callables: that keeps reference cycles
// (leaks) and unbounded chains out, which real chat templates never need.
bool fits_in_namespace(const Value& v);

}  // namespace minnow::chat::jinja
