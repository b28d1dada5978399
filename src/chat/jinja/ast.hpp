// Syntax tree of a parsed template. Every node keeps the byte offset it came
// from so that runtime errors can name a line and column.
#pragma once
#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "chat/jinja/value.hpp"

namespace minnow::chat::jinja {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Keyword {
  std::string name;
  ExprPtr value;
};
struct CallSite {
  std::vector<ExprPtr> args;
  std::vector<Keyword> kwargs;
};

// Filters and tests are resolved while parsing, so an unknown name is reported
// even in a branch that never runs, as jinja2 does.
using FilterFn = Value (*)(const Value& input, CallArgs& args);
using TestFn = bool (*)(const Value& input, CallArgs& args);

enum class BinaryOp { Add, Sub, Mul, Div, FloorDiv, Mod, Pow, Concat, And, Or };
enum class CompareOp { Eq, Ne, Lt, Le, Gt, Ge, In, NotIn };
enum class UnaryOp { Neg, Pos, Not };

struct Literal { Value value; };
struct Name { std::string name; };
struct ListLiteral { std::vector<ExprPtr> items; bool is_tuple = false; };
struct DictLiteral { std::vector<std::pair<ExprPtr, ExprPtr>> items; };
struct GetAttr { ExprPtr object; std::string attr; };
struct GetItem { ExprPtr object; ExprPtr index; };
// a[start:stop:step]; absent parts are null.
struct Slice { ExprPtr object; ExprPtr start, stop, step; };
struct Unary { UnaryOp op; ExprPtr operand; };
struct Binary { BinaryOp op; ExprPtr lhs, rhs; };
// Python chains comparisons: a < b < c means a < b and b < c.
struct Compare { ExprPtr first; std::vector<std::pair<CompareOp, ExprPtr>> rest; };
// "a if cond else b"; otherwise is null when there is no else (undefined then).
struct Conditional { ExprPtr cond, then, otherwise; };
struct Call { ExprPtr callee; CallSite site; };
struct Filter { ExprPtr input; std::string name; FilterFn fn; CallSite site; };
struct Test { ExprPtr input; std::string name; TestFn fn; CallSite site; bool negated = false; };

struct Expr {
  std::size_t pos = 0;
  int depth = 1;  // height of this subtree, bounded by kMaxDepth
  std::variant<Literal, Name, ListLiteral, DictLiteral, GetAttr, GetItem, Slice, Unary, Binary, Compare,
               Conditional, Call, Filter, Test>
      node;
};

struct Stmt;
using Body = std::vector<Stmt>;

// Assignment target: one name, or several to unpack a sequence into.
struct Target {
  std::vector<std::string> names;
  bool unpack = false;
};

struct Text { std::string text; };
struct Print { ExprPtr expr; };
struct If { std::vector<std::pair<ExprPtr, Body>> branches; Body otherwise; };
struct For {
  Target target;
  ExprPtr iterable;
  ExprPtr filter;  // "for x in xs if cond"; may be null
  Body body;
  Body otherwise;  // runs when nothing was iterated
};
struct Set { Target target; ExprPtr value; };
// {% set ns.attr = value %}
struct SetAttr { std::string object; std::string attr; ExprPtr value; };
// {% set name %}...{% endset %} captures rendered text.
struct SetBlock { std::string name; Body body; };
struct Break {};
struct Continue {};
struct Macro {
  std::string name;
  std::vector<std::pair<std::string, ExprPtr>> params;  // default may be null
  Body body;
};

struct Stmt {
  std::size_t pos = 0;
  std::variant<Text, Print, If, For, Set, SetAttr, SetBlock, Break, Continue, Macro> node;
};

// Height of e's subtree, computed from its children's stored depths. Left-deep
// chains such as a.b.c... or 1+1+1... grow without parser recursion, so the
// parser bounds this instead: evaluation and destruction recurse along it.
int node_depth(const Expr& e);

}  // namespace minnow::chat::jinja
