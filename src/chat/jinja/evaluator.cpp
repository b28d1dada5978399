#include "chat/jinja/evaluator.hpp"

#include "chat/jinja/builtins.hpp"
#include "chat/jinja/error.hpp"
#include "chat/jinja/operators.hpp"
#include "chat/jinja/str_ops.hpp"
#include "chat/jinja/value_format.hpp"

namespace minnow::chat::jinja {

// Runtime recursion bound: the parser bounds nesting, but macros can recurse.
constexpr int kMaxEvalDepth = 512;

struct EvalDepthGuard {
  Evaluator& ev;
  EvalDepthGuard(Evaluator& e, std::size_t pos) : ev(e) {
    if (ev.depth_ >= kMaxEvalDepth) ev.fail(pos, "maximum recursion depth exceeded");
    if (ev.steps_left_ == 0) ev.fail(pos, "template runs too long (step limit reached)");
    ++ev.depth_;
    --ev.steps_left_;
  }
  ~EvalDepthGuard() { --ev.depth_; }
};

Evaluator::Evaluator(std::string_view source, const Value& context, std::size_t max_output, std::uint64_t max_steps)
    : source_(source), max_output_(max_output), steps_left_(max_steps) {
  frames_.emplace_back();
  if (context.is_dict()) {
    for (const auto& [k, v] : context.dict_obj().items) frames_[0][k] = v;
  }
}

std::string Evaluator::render(const Body& body) {
  std::string out;
  exec_body(body, out);
  return out;
}

void Evaluator::fail(std::size_t pos, const std::string& what) const { throw_at(source_, pos, what); }

void Evaluator::append(std::string& out, std::string_view text) const {
  if (out.size() + text.size() > max_output_) throw EvalError("output too large");
  out += text;
}

Value Evaluator::lookup(std::string_view name) const {
  for (auto it = frames_.rbegin(); it != frames_.rend(); ++it) {
    const auto found = it->find(name);
    if (found != it->end()) return found->second;
  }
  if (const Value* g = find_global(name)) return *g;
  return Value::undefined(concat("'", name, "' is undefined"));
}

void Evaluator::assign(const Target& target, const Value& value) {
  Frame& frame = frames_.back();
  if (!target.unpack) {
    frame[target.names[0]] = value;
    return;
  }
  const std::vector<Value> parts = iterate(value);
  if (parts.size() != target.names.size()) {
    throw EvalError(parts.size() > target.names.size()
                        ? "too many values to unpack (expected " + std::to_string(target.names.size()) + ")"
                        : "not enough values to unpack (expected " + std::to_string(target.names.size()) +
                              ", got " + std::to_string(parts.size()) + ")");
  }
  for (std::size_t i = 0; i < parts.size(); ++i) frame[target.names[i]] = parts[i];
}

Evaluator::Flow Evaluator::exec_body(const Body& body, std::string& out) {
  for (const Stmt& stmt : body) {
    const Flow flow = exec(stmt, out);
    if (flow != Flow::Normal) return flow;
  }
  return Flow::Normal;
}

Evaluator::Flow Evaluator::exec(const Stmt& stmt, std::string& out) {
  EvalDepthGuard guard(*this, stmt.pos);
  try {
    return std::visit(
        [&](const auto& n) -> Flow {
          using N = std::decay_t<decltype(n)>;
          if constexpr (std::is_same_v<N, Text>) {
            append(out, n.text);
          } else if constexpr (std::is_same_v<N, Print>) {
            append(out, to_str(eval(*n.expr)));
          } else if constexpr (std::is_same_v<N, If>) {
            return exec_if(n, out);
          } else if constexpr (std::is_same_v<N, For>) {
            return exec_for(stmt, n, out);
          } else if constexpr (std::is_same_v<N, Set>) {
            assign(n.target, eval(*n.value));
          } else if constexpr (std::is_same_v<N, SetAttr>) {
            exec_set_attr(stmt, n);
          } else if constexpr (std::is_same_v<N, SetBlock>) {
            std::string captured;
            exec_body(n.body, captured);
            frames_.back()[n.name] = Value(std::move(captured));
          } else if constexpr (std::is_same_v<N, Break>) {
            return Flow::Break;
          } else if constexpr (std::is_same_v<N, Continue>) {
            return Flow::Continue;
          } else if constexpr (std::is_same_v<N, Macro>) {
            const Macro* macro = &n;
            frames_.back()[n.name] =
                Value::callable(n.name, [this, macro](CallArgs& args) { return call_macro(*macro, args); });
          }
          return Flow::Normal;
        },
        stmt.node);
  } catch (const EvalError& e) {
    fail(stmt.pos, e.what());
  }
}

Evaluator::Flow Evaluator::exec_if(const If& node, std::string& out) {
  for (const auto& [cond, body] : node.branches) {
    if (eval(*cond).truthy()) return exec_body(body, out);
  }
  return exec_body(node.otherwise, out);
}

namespace {

Value make_loop(std::size_t i, const std::vector<Value>& items) {
  const std::size_t n = items.size();
  const auto as_int = [](std::size_t v) { return Value(static_cast<std::int64_t>(v)); };
  Value cycle = Value::callable("cycle", [i](CallArgs& args) {
    if (args.positional.empty()) throw EvalError("no items for cycling given");
    return args.positional[i % args.positional.size()];
  });
  return Value::dict({
      {"index", as_int(i + 1)},
      {"index0", as_int(i)},
      {"revindex", as_int(n - i)},
      {"revindex0", as_int(n - i - 1)},
      {"first", Value(i == 0)},
      {"last", Value(i + 1 == n)},
      {"length", as_int(n)},
      {"depth", Value(1)},
      {"depth0", Value(0)},
      {"previtem", i > 0 ? items[i - 1] : Value::undefined("there is no previous item")},
      {"nextitem", i + 1 < n ? items[i + 1] : Value::undefined("there is no next item")},
      {"cycle", cycle},
  });
}

}  // namespace

Evaluator::Flow Evaluator::exec_for(const Stmt& stmt, const For& node, std::string& out) {
  const Value iterable = eval(*node.iterable);
  std::vector<Value> items;
  try {
    items = iterate(iterable);
  } catch (const EvalError& e) {
    fail(node.iterable->pos, e.what());
  }
  if (node.filter) {
    std::vector<Value> kept;
    for (const Value& item : items) {
      frames_.emplace_back();
      try {
        assign(node.target, item);
      } catch (const EvalError& e) {
        frames_.pop_back();
        fail(stmt.pos, e.what());
      }
      const bool keep = eval(*node.filter).truthy();
      frames_.pop_back();
      if (keep) kept.push_back(item);
    }
    items = std::move(kept);
  }
  if (items.empty()) {
    frames_.emplace_back();
    const Flow flow = exec_body(node.otherwise, out);
    frames_.pop_back();
    return flow == Flow::Break || flow == Flow::Continue ? Flow::Normal : flow;
  }
  for (std::size_t i = 0; i < items.size(); ++i) {
    frames_.emplace_back();
    Flow flow = Flow::Normal;
    try {
      assign(node.target, items[i]);
      frames_.back()["loop"] = make_loop(i, items);
      flow = exec_body(node.body, out);
    } catch (...) {
      frames_.pop_back();
      throw;
    }
    frames_.pop_back();
    if (flow == Flow::Break) break;
  }
  return Flow::Normal;
}

void Evaluator::exec_set_attr(const Stmt& stmt, const SetAttr& node) {
  const Value target = lookup(node.object);
  if (!target.is_namespace()) fail(stmt.pos, "cannot assign attribute on non-namespace object");
  Value value = eval(*node.value);
  if (!fits_in_namespace(value)) fail(stmt.pos, "namespace attributes cannot hold namespaces or functions");
  DictObj& ns = target.mutable_dict();
  if (value.depth() + 1 > kMaxDepth) fail(stmt.pos, "value nested too deeply");
  ns.depth = std::max(ns.depth, value.depth() + 1);
  ns.set(node.attr, std::move(value));
}

Value Evaluator::call_macro(const Macro& macro, CallArgs& args) {
  if (args.positional.size() > macro.params.size()) {
    throw EvalError("macro '" + macro.name + "' takes not more than " + std::to_string(macro.params.size()) +
                    " argument(s)");
  }
  Frame frame;
  for (std::size_t i = 0; i < args.positional.size(); ++i) frame[macro.params[i].first] = args.positional[i];
  for (const auto& [k, v] : args.keyword) {
    bool known = false;
    for (const auto& p : macro.params) known = known || p.first == k;
    if (!known) throw EvalError("macro '" + macro.name + "' takes no keyword argument '" + k + "'");
    if (frame.count(k)) throw EvalError("macro '" + macro.name + "' got multiple values for argument '" + k + "'");
    frame[k] = v;
  }
  // The body sees its parameters and the top-level variables, not the caller's locals.
  std::vector<Frame> saved(std::make_move_iterator(frames_.begin() + 1), std::make_move_iterator(frames_.end()));
  frames_.resize(1);
  frames_.push_back(std::move(frame));
  std::string out;
  auto restore = [&] {
    frames_.resize(1);
    for (auto& f : saved) frames_.push_back(std::move(f));
  };
  try {
    for (const auto& [name, def] : macro.params) {
      if (!frames_.back().count(name)) frames_.back()[name] = def ? eval(*def) : Value::undefined("'" + name + "' is undefined");
    }
    exec_body(macro.body, out);
  } catch (...) {
    restore();
    throw;
  }
  restore();
  return Value(std::move(out));
}

CallArgs Evaluator::eval_args(const CallSite& site) {
  CallArgs args;
  for (const auto& a : site.args) args.positional.push_back(eval(*a));
  for (const auto& k : site.kwargs) args.keyword.emplace_back(k.name, eval(*k.value));
  return args;
}

Value Evaluator::eval(const Expr& expr) {
  EvalDepthGuard guard(*this, expr.pos);
  try {
    return eval_node(expr);
  } catch (const EvalError& e) {
    fail(expr.pos, e.what());
  }
}

Value Evaluator::eval_node(const Expr& expr) {
  return std::visit(
      [&](const auto& n) -> Value {
        using N = std::decay_t<decltype(n)>;
        if constexpr (std::is_same_v<N, Literal>) {
          return n.value;
        } else if constexpr (std::is_same_v<N, Name>) {
          return lookup(n.name);
        } else if constexpr (std::is_same_v<N, ListLiteral>) {
          std::vector<Value> items;
          for (const auto& i : n.items) items.push_back(eval(*i));
          return Value::list(std::move(items), n.is_tuple);
        } else if constexpr (std::is_same_v<N, DictLiteral>) {
          std::vector<std::pair<std::string, Value>> items;
          for (const auto& [k, v] : n.items) {
            Value key = eval(*k);
            if (!key.is_string()) fail(k->pos, "dict keys must be strings");
            items.emplace_back(key.as_string(), eval(*v));
          }
          return Value::dict(std::move(items));
        } else if constexpr (std::is_same_v<N, GetAttr>) {
          return get_attr(eval(*n.object), n.attr);
        } else if constexpr (std::is_same_v<N, GetItem>) {
          Value object = eval(*n.object);
          return get_item(object, eval(*n.index));
        } else if constexpr (std::is_same_v<N, Slice>) {
          Value object = eval(*n.object);
          auto part = [&](const ExprPtr& p) { return p ? eval(*p) : Value(None{}); };
          Value start = part(n.start), stop = part(n.stop), step = part(n.step);
          return get_slice(object, start, stop, step);
        } else if constexpr (std::is_same_v<N, Unary>) {
          return unary_op(n.op, eval(*n.operand));
        } else if constexpr (std::is_same_v<N, Binary>) {
          Value lhs = eval(*n.lhs);
          if (n.op == BinaryOp::And) return lhs.truthy() ? eval(*n.rhs) : lhs;
          if (n.op == BinaryOp::Or) return lhs.truthy() ? lhs : eval(*n.rhs);
          return binary_op(n.op, lhs, eval(*n.rhs));
        } else if constexpr (std::is_same_v<N, Compare>) {
          Value lhs = eval(*n.first);
          for (const auto& [op, e] : n.rest) {
            Value rhs = eval(*e);
            if (!compare_op(op, lhs, rhs)) return Value(false);
            lhs = std::move(rhs);
          }
          return Value(true);
        } else if constexpr (std::is_same_v<N, Conditional>) {
          if (eval(*n.cond).truthy()) return eval(*n.then);
          if (n.otherwise) return eval(*n.otherwise);
          return Value::undefined("the inline if-expression evaluated to false and no else section was defined");
        } else if constexpr (std::is_same_v<N, Call>) {
          Value callee = eval(*n.callee);
          CallArgs args = eval_args(n.site);
          require_defined(callee);
          if (!callee.is_callable()) throw EvalError("'" + type_name(callee) + "' object is not callable");
          return callee.callable_obj().fn(args);
        } else if constexpr (std::is_same_v<N, Filter>) {
          Value input = eval(*n.input);
          CallArgs args = eval_args(n.site);
          if (n.fn == nullptr) throw EvalError("unknown filter '" + n.name + "'");
          return n.fn(input, args);
        } else if constexpr (std::is_same_v<N, Test>) {
          Value input = eval(*n.input);
          CallArgs args = eval_args(n.site);
          if (n.fn == nullptr) throw EvalError("unknown test '" + n.name + "'");
          return Value(n.fn(input, args) != n.negated);
        }
      },
      expr.node);
}

}  // namespace minnow::chat::jinja
