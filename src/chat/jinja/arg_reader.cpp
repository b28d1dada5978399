#include <algorithm>

#include "chat/jinja/builtins.hpp"
#include "chat/jinja/error.hpp"

namespace minnow::chat::jinja {

const Value* ArgReader::get(std::size_t index, std::string_view name) {
  used = std::max(used, index + 1);
  known.push_back(name);
  const Value* kw = nullptr;
  for (const auto& [k, v] : args.keyword) {
    if (k == name) kw = &v;
  }
  if (index < args.positional.size()) {
    if (kw != nullptr) throw EvalError(std::string(fn) + "() got multiple values for argument '" + std::string(name) + "'");
    return &args.positional[index];
  }
  return kw;
}

Value ArgReader::get_or(std::size_t index, std::string_view name, Value fallback) {
  const Value* v = get(index, name);
  return v != nullptr ? *v : std::move(fallback);
}

void ArgReader::done() {
  if (args.positional.size() > used) {
    throw EvalError(std::string(fn) + "() takes at most " + std::to_string(used) + " argument(s), got " +
                    std::to_string(args.positional.size()));
  }
  // Keywords that no get() asked for are mistakes, as in Python.
  for (const auto& [k, v] : args.keyword) {
    if (std::find(known.begin(), known.end(), k) == known.end()) {
      throw EvalError(std::string(fn) + "() got an unexpected keyword argument '" + k + "'");
    }
  }
}

}  // namespace minnow::chat::jinja
