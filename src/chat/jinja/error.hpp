// Template errors. Everything the engine reports reaches the caller as a
// minnow::Error whose message names the line and column in the template.
#pragma once
#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

namespace minnow::chat::jinja {

// Thrown by value operations, filters and methods, which do not know where in the
// template they were called from; the evaluator adds the location.
class EvalError : public std::runtime_error {
 public:
  explicit EvalError(const std::string& what) : std::runtime_error(what) {}
};

// Builds "template: line L, column C: what" for byte offset pos of source
// (columns count code points, both start at 1) and throws it as minnow::Error.
[[noreturn]] void throw_at(std::string_view source, std::size_t pos, const std::string& what);

// Nesting limit for expressions, statements and values: deep enough for any real
// template, shallow enough that recursion can never exhaust the stack.
inline constexpr int kMaxDepth = 128;

}  // namespace minnow::chat::jinja
