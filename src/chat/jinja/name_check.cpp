#include "chat/jinja/name_check.hpp"

#include "chat/jinja/error.hpp"

namespace minnow::chat::jinja {
namespace {

class NameChecker {
 public:
  explicit NameChecker(std::string_view source) : source_(source) {}

  void body(const Body& b, bool soft) {
    for (const Stmt& s : b) stmt(s, soft);
  }

 private:
  void stmt(const Stmt& s, bool soft) {
    std::visit(
        [&](const auto& n) {
          using N = std::decay_t<decltype(n)>;
          if constexpr (std::is_same_v<N, Print>) {
            expr(n.expr.get(), soft);
          } else if constexpr (std::is_same_v<N, If>) {
            for (const auto& [cond, b] : n.branches) {
              expr(cond.get(), true);
              body(b, true);
            }
            body(n.otherwise, true);
          } else if constexpr (std::is_same_v<N, For>) {
            expr(n.iterable.get(), soft);
            expr(n.filter.get(), false);
            body(n.body, false);
            body(n.otherwise, false);
          } else if constexpr (std::is_same_v<N, Set> || std::is_same_v<N, SetAttr>) {
            expr(n.value.get(), soft);
          } else if constexpr (std::is_same_v<N, SetBlock>) {
            body(n.body, soft);
          } else if constexpr (std::is_same_v<N, Macro>) {
            for (const auto& p : n.params) expr(p.second.get(), soft);
            body(n.body, false);
          }
        },
        s.node);
  }

  void site(const CallSite& c, bool soft) {
    for (const auto& a : c.args) expr(a.get(), soft);
    for (const auto& k : c.kwargs) expr(k.value.get(), soft);
  }

  void expr(const Expr* e, bool soft) {
    if (e == nullptr) return;
    std::visit(
        [&](const auto& n) {
          using N = std::decay_t<decltype(n)>;
          if constexpr (std::is_same_v<N, ListLiteral>) {
            for (const auto& i : n.items) expr(i.get(), soft);
          } else if constexpr (std::is_same_v<N, DictLiteral>) {
            for (const auto& [k, v] : n.items) {
              expr(k.get(), soft);
              expr(v.get(), soft);
            }
          } else if constexpr (std::is_same_v<N, GetAttr>) {
            expr(n.object.get(), soft);
          } else if constexpr (std::is_same_v<N, GetItem>) {
            expr(n.object.get(), soft);
            expr(n.index.get(), soft);
          } else if constexpr (std::is_same_v<N, Slice>) {
            expr(n.object.get(), soft);
            expr(n.start.get(), soft);
            expr(n.stop.get(), soft);
            expr(n.step.get(), soft);
          } else if constexpr (std::is_same_v<N, Unary>) {
            expr(n.operand.get(), soft);
          } else if constexpr (std::is_same_v<N, Binary>) {
            expr(n.lhs.get(), soft);
            expr(n.rhs.get(), soft);
          } else if constexpr (std::is_same_v<N, Compare>) {
            expr(n.first.get(), soft);
            for (const auto& r : n.rest) expr(r.second.get(), soft);
          } else if constexpr (std::is_same_v<N, Conditional>) {
            expr(n.cond.get(), true);
            expr(n.then.get(), true);
            expr(n.otherwise.get(), true);
          } else if constexpr (std::is_same_v<N, Call>) {
            expr(n.callee.get(), soft);
            site(n.site, soft);
          } else if constexpr (std::is_same_v<N, Filter> || std::is_same_v<N, Test>) {
            expr(n.input.get(), soft);
            site(n.site, soft);
            if (n.fn == nullptr && !soft) {
              throw_at(source_, e->pos,
                       std::string(std::is_same_v<N, Filter> ? "unknown filter '" : "unknown test '") + n.name + "'");
            }
          }
        },
        e->node);
  }

  std::string_view source_;
};

}  // namespace

void check_names(std::string_view source, const Body& body) { NameChecker(source).body(body, false); }

}  // namespace minnow::chat::jinja
