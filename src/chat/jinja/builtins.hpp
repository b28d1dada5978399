// Built-in filters, tests, methods and globals, looked up by name.
#pragma once
#include <string_view>
#include <vector>

#include "chat/jinja/ast.hpp"
#include "chat/jinja/value.hpp"

namespace minnow::chat::jinja {

FilterFn find_filter(std::string_view name);  // null when unknown
TestFn find_test(std::string_view name);      // null when unknown

// Attribute lookup with jinja2's sandbox rules: methods of str, dict and list
// first, then dict keys; Undefined (with a hint) when nothing matches. Throws
// EvalError when obj itself is undefined.
Value get_attr(const Value& obj, const std::string& name);
// obj[index]: list/str indices (negative from the end), dict keys, then
// attributes for string indices; Undefined when nothing matches.
Value get_item(const Value& obj, const Value& index);
// obj[start:stop:step] with Python's clamping; parts may be none.
Value get_slice(const Value& obj, const Value& start, const Value& stop, const Value& step);

// Functions every template can call: raise_exception, range, namespace, dict.
// Null when name is not one of them.
const Value* find_global(std::string_view name);

// Helpers for argument lists of built-ins.
struct ArgReader {
  ArgReader(CallArgs& call_args, std::string_view name) : args(call_args), fn(name) {}
  CallArgs& args;
  std::string_view fn;
  std::size_t used = 0;                  // positional slots asked for
  std::vector<std::string_view> known;   // keyword names asked for
  // The index-th positional argument or the keyword argument of that name.
  const Value* get(std::size_t index, std::string_view name);
  Value get_or(std::size_t index, std::string_view name, Value fallback);
  // Throws EvalError when arguments were given that no get() call asked for.
  void done();
};

}  // namespace minnow::chat::jinja
