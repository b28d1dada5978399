#include "chat/jinja/parser.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <initializer_list>

#include "chat/jinja/builtins.hpp"
#include "chat/jinja/error.hpp"
#include "chat/jinja/name_check.hpp"

namespace minnow::chat::jinja {
namespace {

class Parser {
 public:
  Parser(std::string_view source, const std::vector<Token>& tokens) : src_(source), toks_(tokens) {}

  Body parse() {
    Body body = subparse({}, 0);
    if (cur().type != TokenType::Eof) fail(cur().pos, "unexpected '" + cur().value + "'");
    return body;
  }

 private:
  // ---- token stream ----
  const Token& cur() const { return toks_[i_]; }
  const Token& peek() const { return toks_[std::min(i_ + 1, toks_.size() - 1)]; }
  const Token& next() {
    const Token& t = toks_[i_];
    if (i_ + 1 < toks_.size()) ++i_;
    return t;
  }
  bool at_op(std::string_view op) const { return cur().type == TokenType::Operator && cur().value == op; }
  bool at_name(std::string_view n) const { return cur().type == TokenType::Name && cur().value == n; }

  [[noreturn]] void fail(std::size_t pos, const std::string& what) const { throw_at(src_, pos, what); }

  static std::string describe(const Token& t) {
    switch (t.type) {
      case TokenType::Data: return "template text";
      case TokenType::VarBegin: return "'{{'";
      case TokenType::VarEnd: return "end of print statement";
      case TokenType::BlockBegin: return "'{%'";
      case TokenType::BlockEnd: return "end of statement block";
      case TokenType::String: return "string";
      case TokenType::Integer:
      case TokenType::Float: return "number";
      case TokenType::Eof: return "end of template";
      default: return "'" + t.value + "'";
    }
  }
  [[noreturn]] void unexpected() const { fail(cur().pos, "unexpected " + describe(cur())); }

  void expect_op(std::string_view op) {
    if (!at_op(op)) fail(cur().pos, "expected '" + std::string(op) + "', got " + describe(cur()));
    next();
  }
  std::string expect_name() {
    if (cur().type != TokenType::Name) fail(cur().pos, "expected a name, got " + describe(cur()));
    return next().value;
  }
  // jinja2 accepts Python's colon before a block body: {% for x in y: %}.
  void expect_body_start() {
    if (at_op(":")) next();
    expect_block_end();
  }
  void expect_block_end() {
    if (cur().type != TokenType::BlockEnd) fail(cur().pos, "expected end of statement block, got " + describe(cur()));
    next();
  }

  // Recursion guard for nested statements and expressions.
  struct Guard {
    Parser& p;
    Guard(Parser& parser, std::size_t pos) : p(parser) {
      if (++p.depth_ > kMaxDepth) p.fail(pos, "template nested too deeply");
    }
    ~Guard() { --p.depth_; }
  };

  template <typename N>
  ExprPtr make(std::size_t pos, N&& node) {
    auto e = std::make_unique<Expr>();
    e->pos = pos;
    e->node = std::forward<N>(node);
    e->depth = node_depth(*e);
    if (e->depth > kMaxDepth) fail(pos, "expression nested too deeply");
    return e;
  }

  // ---- statements ----

  // Parses until a block tag whose name is in end_names (left as the current
  // token), or the end of the template when end_names is empty.
  Body subparse(std::initializer_list<std::string_view> end_names, std::size_t open_pos) {
    Body body;
    for (;;) {
      const Token& t = cur();
      switch (t.type) {
        case TokenType::Data:
          body.push_back(Stmt{t.pos, Text{t.value}});
          next();
          break;
        case TokenType::VarBegin: {
          next();
          ExprPtr e = parse_tuple(true, {}, false);
          if (cur().type != TokenType::VarEnd) unexpected();
          next();
          body.push_back(Stmt{t.pos, Print{std::move(e)}});
          break;
        }
        case TokenType::BlockBegin: {
          next();
          if (cur().type == TokenType::Name &&
              std::find(end_names.begin(), end_names.end(), cur().value) != end_names.end()) {
            return body;
          }
          body.push_back(parse_statement(t.pos));
          break;
        }
        case TokenType::Eof: {
          if (end_names.size() == 0) return body;
          std::string want;
          for (const auto n : end_names) want += (want.empty() ? "'" : " or '") + std::string(n) + "'";
          fail(open_pos, "unexpected end of template, expected " + want);
        }
        default: unexpected();
      }
    }
  }

  Stmt parse_statement(std::size_t pos) {
    Guard guard(*this, pos);
    if (cur().type != TokenType::Name) fail(cur().pos, "expected a tag name, got " + describe(cur()));
    const Token& tag = cur();
    const std::string name = tag.value;
    if (name == "for") return parse_for(pos);
    if (name == "if") return parse_if(pos);
    if (name == "set") return parse_set(pos);
    if (name == "macro") return parse_macro(pos);
    if (name == "break" || name == "continue") {
      if (loop_depth_ == 0) fail(tag.pos, "'" + name + "' outside of a loop");
      next();
      expect_block_end();
      return name == "break" ? Stmt{pos, Break{}} : Stmt{pos, Continue{}};
    }
    if (name == "generation") {  // transformers' assistant-mask marker: renders its body
      next();
      expect_body_start();
      If group;
      group.branches.emplace_back(make(pos, Literal{Value(true)}), subparse({"endgeneration"}, pos));
      next();
      expect_block_end();
      return Stmt{pos, std::move(group)};
    }
    fail(tag.pos, "unknown tag '" + name + "'");
  }

  Stmt parse_for(std::size_t pos) {
    next();  // for
    For f;
    f.target = parse_target({"in"});
    if (!at_name("in")) fail(cur().pos, "expected 'in', got " + describe(cur()));
    next();
    f.iterable = parse_tuple(false, {"recursive"}, false);
    if (at_name("if")) {
      next();
      f.filter = parse_expression(true);
    }
    if (at_name("recursive")) fail(cur().pos, "recursive loops are not supported");
    expect_body_start();
    ++loop_depth_;
    f.body = subparse({"endfor", "else"}, pos);
    --loop_depth_;
    if (at_name("else")) {
      next();
      expect_body_start();
      f.otherwise = subparse({"endfor"}, pos);
    }
    next();  // endfor
    expect_block_end();
    return Stmt{pos, std::move(f)};
  }

  Stmt parse_if(std::size_t pos) {
    next();  // if
    If node;
    for (;;) {
      ExprPtr cond = parse_tuple(true, {}, false);
      expect_body_start();
      Body body = subparse({"elif", "else", "endif"}, pos);
      node.branches.emplace_back(std::move(cond), std::move(body));
      const std::string tag = next().value;
      if (tag == "elif") continue;
      if (tag == "else") {
        expect_body_start();
        node.otherwise = subparse({"endif"}, pos);
        next();
      }
      break;
    }
    expect_block_end();
    return Stmt{pos, std::move(node)};
  }

  Stmt parse_set(std::size_t pos) {
    next();  // set
    if (cur().type == TokenType::Name && peek().type == TokenType::Operator && peek().value == ".") {
      SetAttr s;
      s.object = next().value;
      next();  // .
      s.attr = expect_name();
      expect_op("=");
      s.value = parse_tuple(true, {}, false);
      expect_block_end();
      return Stmt{pos, std::move(s)};
    }
    Target target = parse_target({});
    if (at_op("=")) {
      next();
      Set s{std::move(target), parse_tuple(true, {}, false)};
      expect_block_end();
      return Stmt{pos, std::move(s)};
    }
    if (target.unpack) fail(cur().pos, "expected '='");
    expect_body_start();
    SetBlock block{target.names[0], subparse({"endset"}, pos)};
    next();  // endset
    expect_block_end();
    return Stmt{pos, std::move(block)};
  }

  Stmt parse_macro(std::size_t pos) {
    next();  // macro
    Macro m;
    m.name = expect_name();
    expect_op("(");
    while (!at_op(")")) {
      if (!m.params.empty()) expect_op(",");
      const std::size_t at = cur().pos;
      std::string param = expect_name();
      for (const auto& [existing, d] : m.params) {
        if (existing == param) fail(at, "duplicate argument '" + param + "'");
      }
      ExprPtr def;
      if (at_op("=")) {
        next();
        def = parse_expression(true);
      } else if (!m.params.empty() && m.params.back().second) {
        fail(at, "non-default argument follows default argument");
      }
      m.params.emplace_back(std::move(param), std::move(def));
    }
    next();  // )
    expect_body_start();
    const int saved_loops = loop_depth_;
    loop_depth_ = 0;  // break/continue cannot cross a macro boundary
    m.body = subparse({"endmacro"}, pos);
    loop_depth_ = saved_loops;
    next();  // endmacro
    if (cur().type == TokenType::Name && cur().value == m.name) next();
    expect_block_end();
    return Stmt{pos, std::move(m)};
  }

  // One name or comma-separated names to unpack into.
  Target parse_target(std::initializer_list<std::string_view> end_names) {
    Target t;
    for (;;) {
      if (at_op("(")) fail(cur().pos, "parenthesized assignment targets are not supported");
      t.names.push_back(expect_name());
      if (!at_op(",")) break;
      next();
      t.unpack = true;
      if (cur().type == TokenType::Name &&
          std::find(end_names.begin(), end_names.end(), cur().value) != end_names.end()) {
        break;
      }
      if (at_op("=")) break;
    }
    return t;
  }

  // ---- expressions ----

  bool is_tuple_end(std::initializer_list<std::string_view> extra_end) const {
    const TokenType t = cur().type;
    if (t == TokenType::VarEnd || t == TokenType::BlockEnd || t == TokenType::Eof || at_op(")")) return true;
    return t == TokenType::Name && std::find(extra_end.begin(), extra_end.end(), cur().value) != extra_end.end();
  }

  // "a, b" makes a tuple where jinja2 allows one: in {{ }}, set values, loop
  // iterables and parentheses.
  ExprPtr parse_tuple(bool with_condexpr, std::initializer_list<std::string_view> extra_end, bool explicit_parens) {
    const std::size_t pos = cur().pos;
    std::vector<ExprPtr> items;
    bool is_tuple = false;
    for (;;) {
      if (!items.empty()) expect_op(",");
      if (is_tuple_end(extra_end)) break;
      items.push_back(parse_expression(with_condexpr));
      if (!at_op(",")) break;
      is_tuple = true;
    }
    if (!is_tuple) {
      if (!items.empty()) return std::move(items[0]);
      if (!explicit_parens) fail(cur().pos, "expected an expression, got " + describe(cur()));
    }
    return make(pos, ListLiteral{std::move(items), true});
  }

  ExprPtr parse_expression(bool with_condexpr) {
    Guard guard(*this, cur().pos);
    return with_condexpr ? parse_condexpr() : parse_or();
  }

  ExprPtr parse_condexpr() {
    ExprPtr expr = parse_or();
    while (at_name("if")) {
      const std::size_t pos = next().pos;
      ExprPtr cond = parse_or();
      ExprPtr otherwise;
      if (at_name("else")) {
        next();
        otherwise = parse_expression(true);
      }
      expr = make(pos, Conditional{std::move(cond), std::move(expr), std::move(otherwise)});
    }
    return expr;
  }

  ExprPtr parse_or() {
    ExprPtr lhs = parse_and();
    while (at_name("or")) {
      const std::size_t pos = next().pos;
      lhs = make(pos, Binary{BinaryOp::Or, std::move(lhs), parse_and()});
    }
    return lhs;
  }

  ExprPtr parse_and() {
    ExprPtr lhs = parse_not();
    while (at_name("and")) {
      const std::size_t pos = next().pos;
      lhs = make(pos, Binary{BinaryOp::And, std::move(lhs), parse_not()});
    }
    return lhs;
  }

  ExprPtr parse_not() {
    if (at_name("not")) {
      const std::size_t pos = next().pos;
      Guard guard(*this, pos);
      return make(pos, Unary{UnaryOp::Not, parse_not()});
    }
    return parse_compare();
  }

  ExprPtr parse_compare() {
    const std::size_t pos = cur().pos;
    ExprPtr first = parse_math1();
    std::vector<std::pair<CompareOp, ExprPtr>> rest;
    for (;;) {
      CompareOp op;
      if (at_op("==")) op = CompareOp::Eq;
      else if (at_op("!=")) op = CompareOp::Ne;
      else if (at_op("<")) op = CompareOp::Lt;
      else if (at_op("<=")) op = CompareOp::Le;
      else if (at_op(">")) op = CompareOp::Gt;
      else if (at_op(">=")) op = CompareOp::Ge;
      else if (at_name("in")) op = CompareOp::In;
      else if (at_name("not") && peek().type == TokenType::Name && peek().value == "in") {
        next();
        op = CompareOp::NotIn;
      } else {
        break;
      }
      next();
      rest.emplace_back(op, parse_math1());
    }
    if (rest.empty()) return first;
    return make(pos, Compare{std::move(first), std::move(rest)});
  }

  template <typename Sub>
  ExprPtr parse_binary_level(Sub sub, std::initializer_list<std::pair<std::string_view, BinaryOp>> ops) {
    ExprPtr lhs = (this->*sub)();
    for (;;) {
      const auto it = std::find_if(ops.begin(), ops.end(), [&](const auto& o) { return at_op(o.first); });
      if (it == ops.end()) return lhs;
      const std::size_t pos = next().pos;
      lhs = make(pos, Binary{it->second, std::move(lhs), (this->*sub)()});
    }
  }

  ExprPtr parse_math1() { return parse_binary_level(&Parser::parse_concat, {{"+", BinaryOp::Add}, {"-", BinaryOp::Sub}}); }
  ExprPtr parse_concat() { return parse_binary_level(&Parser::parse_math2, {{"~", BinaryOp::Concat}}); }
  ExprPtr parse_math2() {
    return parse_binary_level(&Parser::parse_pow, {{"*", BinaryOp::Mul},
                                                   {"/", BinaryOp::Div},
                                                   {"//", BinaryOp::FloorDiv},
                                                   {"%", BinaryOp::Mod}});
  }
  // jinja2's ** is left-associative and binds looser than unary minus.
  ExprPtr parse_pow() { return parse_binary_level(&Parser::parse_unary_filtered, {{"**", BinaryOp::Pow}}); }
  ExprPtr parse_unary_filtered() { return parse_unary(true); }

  ExprPtr parse_unary(bool with_filter) {
    const std::size_t pos = cur().pos;
    Guard guard(*this, pos);
    ExprPtr node;
    if (at_op("-") || at_op("+")) {
      const UnaryOp op = at_op("-") ? UnaryOp::Neg : UnaryOp::Pos;
      next();
      node = make(pos, Unary{op, parse_unary(false)});
    } else {
      node = parse_primary();
    }
    node = parse_postfix(std::move(node));
    if (with_filter) node = parse_filter_expr(std::move(node));
    return node;
  }

  ExprPtr parse_primary() {
    const Token& t = cur();
    switch (t.type) {
      case TokenType::Name: {
        next();
        const std::string& n = t.value;
        if (n == "true" || n == "True") return make(t.pos, Literal{Value(true)});
        if (n == "false" || n == "False") return make(t.pos, Literal{Value(false)});
        if (n == "none" || n == "None") return make(t.pos, Literal{Value(None{})});
        return make(t.pos, Name{n});
      }
      case TokenType::String: {
        std::string s;
        while (cur().type == TokenType::String) s += next().value;  // 'a' 'b' concatenates
        return make(t.pos, Literal{Value(std::move(s))});
      }
      case TokenType::Integer: {
        next();
        return make(t.pos, Literal{Value(static_cast<std::int64_t>(std::stoull(t.value)))});
      }
      case TokenType::Float: {
        next();
        return make(t.pos, Literal{Value(parse_float(t.value))});
      }
      case TokenType::Operator:
        if (t.value == "(") {
          next();
          ExprPtr e = parse_tuple(true, {}, true);
          expect_op(")");
          return e;
        }
        if (t.value == "[") return parse_list();
        if (t.value == "{") return parse_dict();
        break;
      default: break;
    }
    unexpected();
  }

  static double parse_float(const std::string& text) {
    double d = 0;
    const auto res = std::from_chars(text.data(), text.data() + text.size(), d);
    if (res.ec == std::errc::result_out_of_range) {
      // Python rounds overflow to inf and underflow to 0.
      const std::size_t e = text.find_first_of("eE");
      const bool negative_exp = e != std::string::npos && e + 1 < text.size() && text[e + 1] == '-';
      return negative_exp ? 0.0 : HUGE_VAL;
    }
    return d;
  }

  ExprPtr parse_list() {
    const std::size_t pos = next().pos;  // [
    std::vector<ExprPtr> items;
    while (!at_op("]")) {
      if (!items.empty()) {
        expect_op(",");
        if (at_op("]")) break;
      }
      items.push_back(parse_expression(true));
    }
    next();
    return make(pos, ListLiteral{std::move(items), false});
  }

  ExprPtr parse_dict() {
    const std::size_t pos = next().pos;  // {
    std::vector<std::pair<ExprPtr, ExprPtr>> items;
    while (!at_op("}")) {
      if (!items.empty()) {
        expect_op(",");
        if (at_op("}")) break;
      }
      ExprPtr key = parse_expression(true);
      expect_op(":");
      items.emplace_back(std::move(key), parse_expression(true));
    }
    next();
    return make(pos, DictLiteral{std::move(items)});
  }

  ExprPtr parse_postfix(ExprPtr node) {
    for (;;) {
      if (at_op(".") || at_op("[")) {
        node = parse_subscript(std::move(node));
      } else if (at_op("(")) {
        node = parse_call(std::move(node));
      } else {
        return node;
      }
    }
  }

  ExprPtr parse_filter_expr(ExprPtr node) {
    for (;;) {
      if (at_op("|")) {
        node = parse_filter(std::move(node));
      } else if (at_name("is")) {
        node = parse_test(std::move(node));
      } else if (at_op("(")) {
        node = parse_call(std::move(node));
      } else {
        return node;
      }
    }
  }

  ExprPtr parse_subscript(ExprPtr node) {
    const Token& t = next();
    if (t.value == ".") {
      const Token& attr = next();
      if (attr.type == TokenType::Name) return make(t.pos, GetAttr{std::move(node), attr.value});
      if (attr.type != TokenType::Integer) fail(attr.pos, "expected name or number");
      ExprPtr index = make(attr.pos, Literal{Value(static_cast<std::int64_t>(std::stoull(attr.value)))});
      return make(t.pos, GetItem{std::move(node), std::move(index)});
    }
    // a[i], a[start:stop:step]
    ExprPtr parts[3];
    bool is_slice = false;
    if (!at_op(":")) parts[0] = parse_expression(true);
    for (int k = 1; k < 3 && at_op(":"); ++k) {
      next();
      is_slice = true;
      if (!at_op(":") && !at_op("]")) parts[k] = parse_expression(true);
    }
    if (at_op(",")) fail(cur().pos, "tuple subscripts are not supported");
    expect_op("]");
    if (!is_slice) {
      if (!parts[0]) fail(t.pos, "expected an expression, got ']'");
      return make(t.pos, GetItem{std::move(node), std::move(parts[0])});
    }
    return make(t.pos, Slice{std::move(node), std::move(parts[0]), std::move(parts[1]), std::move(parts[2])});
  }

  CallSite parse_call_site() {
    expect_op("(");
    CallSite site;
    bool first = true;
    while (!at_op(")")) {
      if (!first) {
        expect_op(",");
        if (at_op(")")) break;
      }
      first = false;
      if (at_op("*") || at_op("**")) fail(cur().pos, "*args and **kwargs are not supported");
      if (cur().type == TokenType::Name && peek().type == TokenType::Operator && peek().value == "=") {
        std::string name = next().value;
        next();  // =
        site.kwargs.push_back(Keyword{std::move(name), parse_expression(true)});
      } else {
        if (!site.kwargs.empty()) fail(cur().pos, "positional argument follows keyword argument");
        site.args.push_back(parse_expression(true));
      }
    }
    next();  // )
    return site;
  }

  ExprPtr parse_call(ExprPtr callee) {
    const std::size_t pos = callee->pos;
    CallSite site = parse_call_site();
    return make(pos, Call{std::move(callee), std::move(site)});
  }

  ExprPtr parse_filter(ExprPtr input) {
    next();  // |
    const std::size_t pos = cur().pos;
    const std::string name = expect_name();
    const FilterFn fn = find_filter(name);  // null when unknown: see check_names()
    CallSite site;
    if (at_op("(")) site = parse_call_site();
    return make(pos, Filter{std::move(input), name, fn, std::move(site)});
  }

  ExprPtr parse_test(ExprPtr input) {
    next();  // is
    bool negated = false;
    if (at_name("not")) {
      next();
      negated = true;
    }
    const std::size_t pos = cur().pos;
    const std::string name = expect_name();
    const TestFn fn = find_test(name);
    CallSite site;
    const TokenType t = cur().type;
    if (at_op("(")) {
      site = parse_call_site();
    } else if ((t == TokenType::Name || t == TokenType::String || t == TokenType::Integer ||
                t == TokenType::Float || at_op("[") || at_op("{")) &&
               !at_name("else") && !at_name("or") && !at_name("and")) {
      // One bare argument: "x is divisibleby 3", "x is sameas none".
      if (at_name("is")) fail(cur().pos, "cannot chain multiple tests with 'is'");
      site.args.push_back(parse_postfix(parse_primary()));
    }
    return make(pos, Test{std::move(input), name, fn, std::move(site), negated});
  }

  std::string_view src_;
  const std::vector<Token>& toks_;
  std::size_t i_ = 0;
  int depth_ = 0;
  int loop_depth_ = 0;
};

}  // namespace

Body parse_template(std::string_view source, const std::vector<Token>& tokens) {
  Body body = Parser(source, tokens).parse();
  check_names(source, body);
  return body;
}

}  // namespace minnow::chat::jinja
