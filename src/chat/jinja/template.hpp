// A parsed Jinja template, rendered with transformers' chat-template settings
// (trim_blocks, lstrip_blocks, sandboxed, default Undefined).
#pragma once
#include <string>
#include <string_view>

#include "chat/jinja/ast.hpp"
#include "chat/jinja/value.hpp"

namespace minnow::chat::jinja {

class Template {
 public:
  // Throws minnow::Error ("template: line L, column C: ...") on syntax errors.
  explicit Template(std::string_view source);

  // context: a dict of variables. Throws minnow::Error on runtime errors,
  // including raise_exception() calls from the template.
  std::string render(const Value& context) const;

 private:
  std::string source_;  // normalized; AST positions point into it
  Body body_;
};

}  // namespace minnow::chat::jinja
