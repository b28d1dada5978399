#include "chat/jinja/ast.hpp"

#include <algorithm>

namespace minnow::chat::jinja {

namespace {

int child_depth(const Expr* e) { return e ? e->depth : 0; }

}  // namespace

int node_depth(const Expr& e) {
  int d = 0;
  auto use = [&d](const Expr* c) { d = std::max(d, child_depth(c)); };
  auto use_site = [&](const CallSite& s) {
    for (const auto& a : s.args) use(a.get());
    for (const auto& k : s.kwargs) use(k.value.get());
  };
  std::visit(
      [&](const auto& n) {
        using N = std::decay_t<decltype(n)>;
        if constexpr (std::is_same_v<N, ListLiteral>) {
          for (const auto& i : n.items) use(i.get());
        } else if constexpr (std::is_same_v<N, DictLiteral>) {
          for (const auto& [k, v] : n.items) {
            use(k.get());
            use(v.get());
          }
        } else if constexpr (std::is_same_v<N, GetAttr>) {
          use(n.object.get());
        } else if constexpr (std::is_same_v<N, GetItem>) {
          use(n.object.get());
          use(n.index.get());
        } else if constexpr (std::is_same_v<N, Slice>) {
          use(n.object.get());
          use(n.start.get());
          use(n.stop.get());
          use(n.step.get());
        } else if constexpr (std::is_same_v<N, Unary>) {
          use(n.operand.get());
        } else if constexpr (std::is_same_v<N, Binary>) {
          use(n.lhs.get());
          use(n.rhs.get());
        } else if constexpr (std::is_same_v<N, Compare>) {
          use(n.first.get());
          for (const auto& r : n.rest) use(r.second.get());
        } else if constexpr (std::is_same_v<N, Conditional>) {
          use(n.cond.get());
          use(n.then.get());
          use(n.otherwise.get());
        } else if constexpr (std::is_same_v<N, Call>) {
          use(n.callee.get());
          use_site(n.site);
        } else if constexpr (std::is_same_v<N, Filter> || std::is_same_v<N, Test>) {
          use(n.input.get());
          use_site(n.site);
        }
      },
      e.node);
  return d + 1;
}

}  // namespace minnow::chat::jinja
