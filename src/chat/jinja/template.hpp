// A parsed Jinja template, rendered with transformers' chat-template settings
// (trim_blocks, lstrip_blocks, sandboxed, default Undefined).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "chat/jinja/ast.hpp"
#include "chat/jinja/value.hpp"

namespace minnow::chat::jinja {

// Bounds on one render, so that no template can hang or grow without end: a
// conversation's prompt needs a tiny fraction of either.
struct RenderLimits {
  std::size_t max_output = std::size_t{1} << 26;  // bytes of rendered text (64 MiB)
  std::uint64_t max_steps = 20'000'000;           // statements and expressions evaluated
};

class Template {
 public:
  // Throws minnow::Error ("template: line L, column C: ...") on syntax errors.
  explicit Template(std::string_view source);

  // context: a dict of variables. Throws minnow::Error on runtime errors,
  // including raise_exception() calls from the template, and when a limit is hit.
  std::string render(const Value& context, const RenderLimits& limits = {}) const;

 private:
  std::string source_;  // normalized; AST positions point into it
  Body body_;
};

}  // namespace minnow::chat::jinja
