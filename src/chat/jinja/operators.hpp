// Python semantics of Jinja's operators on values. Type errors and undefined
// operands throw EvalError; the evaluator adds the template location.
#pragma once
#include <cstddef>
#include <vector>

#include "chat/jinja/ast.hpp"
#include "chat/jinja/value.hpp"

namespace minnow::chat::jinja {

// Arithmetic and "~"; not the short-circuit operators and/or.
Value binary_op(BinaryOp op, const Value& a, const Value& b);
Value unary_op(UnaryOp op, const Value& v);
bool compare_op(CompareOp op, const Value& a, const Value& b);
// Python "item in container".
bool contains(const Value& container, const Value& item);
// The items a for loop visits: list items, string characters, dict keys;
// nothing for undefined.
std::vector<Value> iterate(const Value& v);
// Python len(); undefined has length 0, as with jinja2's Undefined.
std::size_t length_of(const Value& v);
// Throws the error an undefined value stands for, if v is undefined.
void require_defined(const Value& v);

// Results longer than this (bytes or items) are refused rather than allocated.
inline constexpr std::size_t kMaxResultSize = std::size_t{1} << 26;
// Lists longer than this are refused (doubling a list in a loop would exhaust memory).
inline constexpr std::size_t kMaxListItems = std::size_t{1} << 22;

}  // namespace minnow::chat::jinja
