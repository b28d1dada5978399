#include "chat/jinja/operators.hpp"

#include <cmath>

#include "chat/jinja/error.hpp"
#include "chat/jinja/utf8.hpp"
#include "chat/jinja/value_format.hpp"

namespace minnow::chat::jinja {
namespace {

const char* op_symbol(BinaryOp op) {
  switch (op) {
    case BinaryOp::Add: return "+";
    case BinaryOp::Sub: return "-";
    case BinaryOp::Mul: return "*";
    case BinaryOp::Div: return "/";
    case BinaryOp::FloorDiv: return "//";
    case BinaryOp::Mod: return "%";
    case BinaryOp::Pow: return "**";
    case BinaryOp::Concat: return "~";
    case BinaryOp::And: return "and";
    case BinaryOp::Or: return "or";
  }
  return "?";
}

[[noreturn]] void unsupported(BinaryOp op, const Value& a, const Value& b) {
  throw EvalError(std::string("unsupported operand type(s) for ") + op_symbol(op) + ": '" + type_name(a) +
                  "' and '" + type_name(b) + "'");
}

// Python ints are unbounded; ours stop at 64 bits with an error, never wrap.
std::int64_t add_i(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) throw EvalError("integer overflow");
  return r;
}
std::int64_t sub_i(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  if (__builtin_sub_overflow(a, b, &r)) throw EvalError("integer overflow");
  return r;
}
std::int64_t mul_i(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) throw EvalError("integer overflow");
  return r;
}

std::int64_t int_pow(std::int64_t base, std::int64_t exp) {
  std::int64_t result = 1;
  while (exp > 0) {
    if (exp & 1) result = mul_i(result, base);
    exp >>= 1;
    if (exp > 0) base = mul_i(base, base);
  }
  return result;
}

// Python's float floor division and modulo (the result takes the divisor's sign).
double py_fmod(double a, double b) {
  double mod = std::fmod(a, b);
  if (mod != 0) {
    if ((b < 0) != (mod < 0)) mod += b;
  } else {
    mod = std::copysign(0.0, b);
  }
  return mod;
}

double py_floordiv(double a, double b) {
  const double mod = std::fmod(a, b);
  double div = (a - mod) / b;
  if (mod != 0 && (b < 0) != (mod < 0)) div -= 1.0;
  if (div == 0) return std::copysign(0.0, a / b);
  double floor_div = std::floor(div);
  if (div - floor_div > 0.5) floor_div += 1.0;
  return floor_div;
}

Value repeat(const Value& seq, std::int64_t times) {
  if (times <= 0) return seq.is_string() ? Value("") : Value::list({}, seq.list_obj().is_tuple);
  const auto n = static_cast<std::size_t>(times);
  if (seq.is_string()) {
    if (seq.as_string().size() > kMaxResultSize / n) throw EvalError("result too large");
    std::string out;
    out.reserve(seq.as_string().size() * n);
    for (std::size_t i = 0; i < n; ++i) out += seq.as_string();
    return Value(std::move(out));
  }
  const auto& items = seq.items();
  if (!items.empty() && items.size() > kMaxListItems / n) throw EvalError("result too large");
  std::vector<Value> out;
  for (std::size_t i = 0; i < n && !items.empty(); ++i) out.insert(out.end(), items.begin(), items.end());
  return Value::list(std::move(out), seq.list_obj().is_tuple);
}

bool is_sequence_value(const Value& v) { return v.is_string() || v.is_list(); }

Value arithmetic(BinaryOp op, const Value& a, const Value& b) {
  const bool ints = !a.is_float() && !b.is_float();
  const std::int64_t x = ints ? a.int_value() : 0, y = ints ? b.int_value() : 0;
  const double fx = a.number_as_double(), fy = b.number_as_double();
  switch (op) {
    case BinaryOp::Add: return ints ? Value(add_i(x, y)) : Value(fx + fy);
    case BinaryOp::Sub: return ints ? Value(sub_i(x, y)) : Value(fx - fy);
    case BinaryOp::Mul: return ints ? Value(mul_i(x, y)) : Value(fx * fy);
    case BinaryOp::Div:
      if (fy == 0) throw EvalError("division by zero");
      return Value(fx / fy);
    case BinaryOp::FloorDiv:
      if (ints) {
        if (y == 0) throw EvalError("integer division or modulo by zero");
        if (x == INT64_MIN && y == -1) throw EvalError("integer overflow");
        std::int64_t q = x / y;
        if ((x % y != 0) && ((x < 0) != (y < 0))) --q;
        return Value(q);
      }
      if (fy == 0) throw EvalError("float floor division by zero");
      return Value(py_floordiv(fx, fy));
    case BinaryOp::Mod:
      if (ints) {
        if (y == 0) throw EvalError("integer division or modulo by zero");
        if (y == -1) return Value(std::int64_t{0});
        std::int64_t m = x % y;
        if (m != 0 && ((m < 0) != (y < 0))) m += y;
        return Value(m);
      }
      if (fy == 0) throw EvalError("float modulo");
      return Value(py_fmod(fx, fy));
    case BinaryOp::Pow:
      if (ints && y >= 0) return Value(int_pow(x, y));
      if (fx == 0 && fy < 0) throw EvalError("0.0 cannot be raised to a negative power");
      if (fx < 0 && fy != std::floor(fy)) throw EvalError("negative number cannot be raised to a fractional power");
      return Value(std::pow(fx, fy));
    default: break;
  }
  unsupported(op, a, b);
}

}  // namespace

void require_defined(const Value& v) {
  if (v.is_undefined()) throw EvalError(v.undefined_hint().empty() ? "value is undefined" : v.undefined_hint());
}

Value binary_op(BinaryOp op, const Value& a, const Value& b) {
  if (op == BinaryOp::Concat) {
    std::string lhs = to_str(a);
    const std::string rhs = to_str(b);
    if (lhs.size() + rhs.size() > kMaxResultSize) throw EvalError("result too large");
    return Value(lhs += rhs);
  }
  require_defined(a);
  require_defined(b);
  if (a.is_number() && b.is_number()) return arithmetic(op, a, b);
  if (op == BinaryOp::Add) {
    if (a.is_string() && b.is_string()) {
      if (a.as_string().size() + b.as_string().size() > kMaxResultSize) throw EvalError("result too large");
      return Value(a.as_string() + b.as_string());
    }
    if (a.is_string()) throw EvalError("can only concatenate str (not \"" + type_name(b) + "\") to str");
    if (a.is_list() && b.is_list() && a.list_obj().is_tuple == b.list_obj().is_tuple) {
      if (a.items().size() + b.items().size() > kMaxListItems) throw EvalError("result too large");
      std::vector<Value> items = a.items();
      items.insert(items.end(), b.items().begin(), b.items().end());
      return Value::list(std::move(items), a.list_obj().is_tuple);
    }
  }
  if (op == BinaryOp::Mul) {
    if (is_sequence_value(a) && (b.is_int() || b.is_bool())) return repeat(a, b.int_value());
    if (is_sequence_value(b) && (a.is_int() || a.is_bool())) return repeat(b, a.int_value());
  }
  if (op == BinaryOp::Mod && a.is_string()) throw EvalError("printf-style string formatting is not supported");
  unsupported(op, a, b);
}

Value unary_op(UnaryOp op, const Value& v) {
  if (op == UnaryOp::Not) return Value(!v.truthy());
  require_defined(v);
  if (v.is_float()) return Value(op == UnaryOp::Neg ? -v.as_float() : v.as_float());
  if (v.is_int() || v.is_bool()) {
    const std::int64_t i = v.int_value();
    if (op == UnaryOp::Pos) return Value(i);
    if (i == INT64_MIN) throw EvalError("integer overflow");
    return Value(-i);
  }
  throw EvalError(std::string("bad operand type for unary ") + (op == UnaryOp::Neg ? "-" : "+") + ": '" +
                  type_name(v) + "'");
}

namespace {

// Three-way order for <, <=, >, >=; throws for types Python cannot order.
int order(const Value& a, const Value& b, const char* sym) {
  require_defined(a);
  require_defined(b);
  if (a.is_number() && b.is_number()) {
    if (!a.is_float() && !b.is_float()) return a.int_value() < b.int_value() ? -1 : a.int_value() > b.int_value();
    const double x = a.number_as_double(), y = b.number_as_double();
    if (std::isnan(x) || std::isnan(y)) return 2;  // every comparison with nan is false
    return x < y ? -1 : x > y;
  }
  if (a.is_string() && b.is_string()) {
    const int c = a.as_string().compare(b.as_string());  // UTF-8 byte order is code point order
    return c < 0 ? -1 : c > 0;
  }
  if (a.is_list() && b.is_list() && a.list_obj().is_tuple == b.list_obj().is_tuple) {
    const auto &x = a.items(), &y = b.items();
    for (std::size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (!values_equal(x[i], y[i])) return order(x[i], y[i], sym);
    }
    return x.size() < y.size() ? -1 : x.size() > y.size();
  }
  throw EvalError(std::string("'") + sym + "' not supported between instances of '" + type_name(a) + "' and '" +
                  type_name(b) + "'");
}

}  // namespace

bool compare_op(CompareOp op, const Value& a, const Value& b) {
  switch (op) {
    case CompareOp::Eq: return values_equal(a, b);
    case CompareOp::Ne: return !values_equal(a, b);
    case CompareOp::Lt: return order(a, b, "<") == -1;
    case CompareOp::Le: { const int o = order(a, b, "<="); return o == -1 || o == 0; }
    case CompareOp::Gt: return order(a, b, ">") == 1;
    case CompareOp::Ge: { const int o = order(a, b, ">="); return o == 1 || o == 0; }
    case CompareOp::In: return contains(b, a);
    case CompareOp::NotIn: return !contains(b, a);
  }
  return false;
}

bool contains(const Value& container, const Value& item) {
  switch (container.kind()) {
    case Value::Kind::Undefined: return false;
    case Value::Kind::String:
      if (!item.is_string()) {
        throw EvalError("'in <string>' requires string as left operand, not " + type_name(item));
      }
      return container.as_string().find(item.as_string()) != std::string::npos;
    case Value::Kind::List:
      for (const auto& v : container.items()) {
        if (values_equal(v, item)) return true;
      }
      return false;
    case Value::Kind::Dict:
      if (container.is_namespace()) break;
      return item.is_string() && container.dict_obj().find(item.as_string()) != nullptr;
    default: break;
  }
  throw EvalError("argument of type '" + type_name(container) + "' is not iterable");
}

std::vector<Value> iterate(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::Undefined: return {};
    case Value::Kind::List: return v.items();
    case Value::Kind::String: {
      std::vector<Value> chars;
      const std::string& s = v.as_string();
      for (std::size_t i = 0; i < s.size();) {
        const std::size_t start = i;
        next_code_point(s, i);
        chars.emplace_back(s.substr(start, i - start));
      }
      return chars;
    }
    case Value::Kind::Dict: {
      if (v.is_namespace()) break;
      std::vector<Value> keys;
      for (const auto& [k, item] : v.dict_obj().items) keys.emplace_back(k);
      return keys;
    }
    default: break;
  }
  throw EvalError("'" + type_name(v) + "' object is not iterable");
}

std::size_t length_of(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::Undefined: return 0;
    case Value::Kind::String: return count_code_points(v.as_string());
    case Value::Kind::List: return v.items().size();
    case Value::Kind::Dict:
      if (v.is_namespace()) break;
      return v.dict_obj().items.size();
    default: break;
  }
  throw EvalError("object of type '" + type_name(v) + "' has no len()");
}

}  // namespace minnow::chat::jinja
