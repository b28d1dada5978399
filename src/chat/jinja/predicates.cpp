// Jinja tests ("x is defined", "x is string", ...).
#include <map>

#include "chat/jinja/builtins.hpp"
#include "chat/jinja/error.hpp"
#include "chat/jinja/operators.hpp"
#include "chat/jinja/str_ops.hpp"
#include "chat/jinja/value_format.hpp"

namespace minnow::chat::jinja {
namespace {

const Value& required_arg(CallArgs& args, const char* test) {
  ArgReader r(args, test);
  const Value* v = r.get(0, "other");
  r.done();
  if (v == nullptr) throw EvalError(std::string("test '") + test + "' needs an argument");
  return *v;
}

bool no_args(CallArgs& args, const char* test) {
  ArgReader r(args, test);
  r.done();
  return true;
}

// jinja2 tests odd/even/divisibleby as "value % n == r", so floats work too.
bool mod_equals(const Value& v, const Value& n, std::int64_t r) {
  return values_equal(binary_op(BinaryOp::Mod, v, n), Value(r));
}

template <CompareOp Op>
bool compare_test(const Value& v, CallArgs& a) {
  return compare_op(Op, v, required_arg(a, "compare"));
}

const std::map<std::string, TestFn, std::less<>>& tests() {
  static const std::map<std::string, TestFn, std::less<>> table = {
      {"defined", [](const Value& v, CallArgs& a) { return no_args(a, "defined") && !v.is_undefined(); }},
      {"undefined", [](const Value& v, CallArgs& a) { return no_args(a, "undefined") && v.is_undefined(); }},
      {"none", [](const Value& v, CallArgs& a) { return no_args(a, "none") && v.is_none(); }},
      {"string", [](const Value& v, CallArgs& a) { return no_args(a, "string") && v.is_string(); }},
      {"number", [](const Value& v, CallArgs& a) { return no_args(a, "number") && v.is_number(); }},
      {"integer", [](const Value& v, CallArgs& a) { return no_args(a, "integer") && v.is_int(); }},
      {"float", [](const Value& v, CallArgs& a) { return no_args(a, "float") && v.is_float(); }},
      {"boolean", [](const Value& v, CallArgs& a) { return no_args(a, "boolean") && v.is_bool(); }},
      {"true", [](const Value& v, CallArgs& a) { return no_args(a, "true") && v.is_bool() && v.as_bool(); }},
      {"false", [](const Value& v, CallArgs& a) { return no_args(a, "false") && v.is_bool() && !v.as_bool(); }},
      {"mapping", [](const Value& v, CallArgs& a) { return no_args(a, "mapping") && v.is_dict() && !v.is_namespace(); }},
      // Undefined iterates as empty and has a length, so it is both, as in jinja2.
      {"iterable",
       [](const Value& v, CallArgs& a) {
         return no_args(a, "iterable") && (v.is_undefined() || v.is_string() || v.is_list() ||
                                           (v.is_dict() && !v.is_namespace()));
       }},
      {"sequence",
       [](const Value& v, CallArgs& a) {
         return no_args(a, "sequence") && (v.is_undefined() || v.is_string() || v.is_list() ||
                                           (v.is_dict() && !v.is_namespace()));
       }},
      {"callable", [](const Value& v, CallArgs& a) { return no_args(a, "callable") && v.is_callable(); }},
      {"odd", [](const Value& v, CallArgs& a) { return no_args(a, "odd") && mod_equals(v, Value(2), 1); }},
      {"even", [](const Value& v, CallArgs& a) { return no_args(a, "even") && mod_equals(v, Value(2), 0); }},
      {"divisibleby",
       [](const Value& v, CallArgs& a) { return mod_equals(v, required_arg(a, "divisibleby"), 0); }},
      {"lower", [](const Value& v, CallArgs& a) { return no_args(a, "lower") && py_islower(to_str(v)); }},
      {"upper", [](const Value& v, CallArgs& a) { return no_args(a, "upper") && py_isupper(to_str(v)); }},
      {"sameas",
       [](const Value& v, CallArgs& a) {
         const Value& o = required_arg(a, "sameas");
         if (v.object_id() != nullptr || o.object_id() != nullptr) return v.object_id() == o.object_id();
         return v.kind() == o.kind() && values_equal(v, o);
       }},
      {"eq", compare_test<CompareOp::Eq>},  {"equalto", compare_test<CompareOp::Eq>},
      {"ne", compare_test<CompareOp::Ne>},  {"lt", compare_test<CompareOp::Lt>},
      {"lessthan", compare_test<CompareOp::Lt>}, {"le", compare_test<CompareOp::Le>},
      {"gt", compare_test<CompareOp::Gt>},  {"greaterthan", compare_test<CompareOp::Gt>},
      {"ge", compare_test<CompareOp::Ge>},  {"in", compare_test<CompareOp::In>},
  };
  return table;
}

}  // namespace

TestFn find_test(std::string_view name) {
  const auto& table = tests();
  const auto it = table.find(name);
  return it == table.end() ? nullptr : it->second;
}

}  // namespace minnow::chat::jinja
