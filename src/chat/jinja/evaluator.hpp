// Renders a parsed template body against a context of variables.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "chat/jinja/ast.hpp"
#include "chat/jinja/value.hpp"

namespace minnow::chat::jinja {

class Evaluator {
 public:
  // source: the normalized template text, for error locations.
  // context: a dict of the variables the template sees.
  // max_output: bytes of rendered text; max_steps: statements and expressions
  // evaluated. Exceeding either is an error, which bounds any loop.
  Evaluator(std::string_view source, const Value& context, std::size_t max_output, std::uint64_t max_steps);

  std::string render(const Body& body);

 private:
  enum class Flow { Normal, Break, Continue };
  using Frame = std::map<std::string, Value, std::less<>>;

  Flow exec_body(const Body& body, std::string& out);
  Flow exec(const Stmt& stmt, std::string& out);
  Flow exec_if(const If& node, std::string& out);
  Flow exec_for(const Stmt& stmt, const For& node, std::string& out);
  void exec_set_attr(const Stmt& stmt, const SetAttr& node);
  Value call_macro(const Macro& macro, CallArgs& args);

  Value eval(const Expr& expr);
  Value eval_node(const Expr& expr);
  CallArgs eval_args(const CallSite& site);

  Value lookup(std::string_view name) const;
  void assign(const Target& target, const Value& value);
  void append(std::string& out, std::string_view text) const;
  [[noreturn]] void fail(std::size_t pos, const std::string& what) const;

  std::string_view source_;
  // frames_[0] holds the context and top-level sets; loops push one frame per
  // iteration (sets inside a loop body do not leak out, as in jinja2).
  std::vector<Frame> frames_;
  int depth_ = 0;
  std::size_t max_output_;
  std::uint64_t steps_left_;

  friend struct EvalDepthGuard;
};

}  // namespace minnow::chat::jinja
