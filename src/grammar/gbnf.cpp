#include "grammar/gbnf.hpp"

#include <algorithm>
#include <map>

#include "base/error.hpp"
#include "tokenizer/utf8.hpp"

namespace minnow::grammar {

bool CharSet::contains(uint32_t c) const {
  bool in = std::any_of(ranges.begin(), ranges.end(), [c](auto& r) { return r.first <= c && c <= r.second; });
  return in != negated;
}

bool CharSet::intersects(uint32_t lo, uint32_t hi) const {
  if (!negated)
    return std::any_of(ranges.begin(), ranges.end(), [&](auto& r) { return r.first <= hi && lo <= r.second; });
  // Some code point of [lo, hi] escapes every range: walk the ranges in order of start.
  auto sorted = ranges;
  std::sort(sorted.begin(), sorted.end());
  uint32_t next = lo;  // the lowest code point not yet known to be covered
  for (auto& [a, b] : sorted) {
    if (a > next) break;
    if (b >= next) {
      if (b >= hi) return false;
      next = b + 1;
    }
  }
  return next <= hi;
}

namespace {

constexpr int kMaxDepth = 200;            // nested groups: the parser recurses
constexpr uint32_t kMaxRepeat = 1000;     // {m,n} bounds
constexpr size_t kMaxSymbols = 1u << 20;  // a grammar from a request cannot take all memory
constexpr uint32_t kMaxCodePoint = 0x10FFFF;

using Sequence = std::vector<Symbol>;

class Parser {
 public:
  explicit Parser(std::string_view text) : s_(text) {}

  Grammar parse() {
    skip_space();
    if (at_end()) fail("the grammar is empty");
    while (!at_end()) {
      const std::string name = parse_name();
      skip_space();
      if (!consume("::=")) fail("expected '::=' after the rule name '" + name + "'");
      const uint32_t id = rule_id(name);
      if (defined_[id]) fail("rule '" + name + "' is defined twice");
      defined_[id] = true;
      rules_[id] = parse_alternatives(name, 0);
      skip_space();
    }
    for (size_t i = 0; i < rules_.size(); ++i)
      if (!defined_[i]) throw Error("grammar: rule '" + names_[i] + "' is used but not defined");
    auto root = ids_.find("root");
    if (root == ids_.end()) throw Error("grammar: no rule named 'root' (where output starts)");
    check_left_recursion();
    return flatten(root->second);
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    size_t line = 1, col = 1;
    for (size_t i = 0; i < pos_ && i < s_.size(); ++i) {
      if (s_[i] == '\n') ++line, col = 1;
      else ++col;
    }
    throw Error("grammar: " + what + " (line " + std::to_string(line) + ", column " + std::to_string(col) + ")");
  }

  bool at_end() const { return pos_ >= s_.size(); }
  char peek() const { return at_end() ? '\0' : s_[pos_]; }
  bool consume(std::string_view t) {
    if (s_.substr(pos_, t.size()) != t) return false;
    pos_ += t.size();
    return true;
  }
  void skip_space() {
    while (!at_end()) {
      if (peek() == '#') {
        while (!at_end() && peek() != '\n') ++pos_;
      } else if (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r') {
        ++pos_;
      } else {
        break;
      }
    }
  }
  static bool name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
  }
  std::string parse_name() {
    const size_t start = pos_;
    while (!at_end() && name_char(peek())) ++pos_;
    if (pos_ == start) fail("expected a rule name");
    return std::string(s_.substr(start, pos_ - start));
  }
  // At a rule name followed by '::=': the current rule's body has ended.
  bool at_rule_start() const {
    size_t i = pos_;
    while (i < s_.size() && name_char(s_[i])) ++i;
    if (i == pos_) return false;
    while (i < s_.size() && (s_[i] == ' ' || s_[i] == '\t')) ++i;
    return s_.substr(i, 3) == "::=";
  }

  uint32_t rule_id(const std::string& name) {
    auto [it, added] = ids_.emplace(name, static_cast<uint32_t>(rules_.size()));
    if (added) {
      rules_.emplace_back();
      names_.push_back(name);
      defined_.push_back(false);
    }
    return it->second;
  }
  uint32_t new_rule(const std::string& parent, std::vector<Sequence> alts) {
    const auto id = static_cast<uint32_t>(rules_.size());
    rules_.push_back(std::move(alts));
    names_.push_back(parent + "-" + std::to_string(id));
    defined_.push_back(true);
    return id;
  }
  Symbol chars(CharSet set) {
    sets_.push_back(std::move(set));
    if (sets_.size() > kMaxSymbols) fail("the grammar is too large");
    return {Symbol::Kind::Chars, static_cast<uint32_t>(sets_.size() - 1)};
  }

  std::vector<Sequence> parse_alternatives(const std::string& rule, int depth) {
    if (depth > kMaxDepth) fail("groups nested too deeply");
    std::vector<Sequence> alts;
    alts.push_back(parse_sequence(rule, depth));
    while (true) {
      skip_space();
      if (!consume("|")) break;
      alts.push_back(parse_sequence(rule, depth));
    }
    return alts;
  }

  Sequence parse_sequence(const std::string& rule, int depth) {
    Sequence seq;
    while (true) {
      skip_space();
      if (at_end() || peek() == '|' || peek() == ')' || at_rule_start()) return seq;
      Sequence item = parse_item(rule, depth);
      skip_space();
      uint32_t lo = 1, hi = 1;
      bool unbounded = false;
      if (consume("*")) lo = 0, unbounded = true;
      else if (consume("+")) lo = 1, unbounded = true;
      else if (consume("?")) lo = 0, hi = 1;
      else if (consume("{")) parse_bounds(lo, hi, unbounded);
      if (lo == 1 && hi == 1 && !unbounded) {
        seq.insert(seq.end(), item.begin(), item.end());
      } else {
        repeat(rule, item, lo, hi, unbounded, seq);
      }
      if (seq.size() > kMaxSymbols) fail("the grammar is too large");
    }
  }

  void parse_bounds(uint32_t& lo, uint32_t& hi, bool& unbounded) {
    skip_space();
    lo = parse_count();
    skip_space();
    if (consume("}")) {
      hi = lo;
      return;
    }
    if (!consume(",")) fail("expected ',' or '}' in a repetition {m,n}");
    skip_space();
    if (consume("}")) {
      unbounded = true;
      return;
    }
    hi = parse_count();
    skip_space();
    if (!consume("}")) fail("expected '}' to close a repetition {m,n}");
    if (hi < lo) fail("a repetition {m,n} needs m <= n");
  }
  uint32_t parse_count() {
    if (!(peek() >= '0' && peek() <= '9')) fail("expected a number in a repetition {m,n}");
    uint64_t v = 0;
    while (peek() >= '0' && peek() <= '9') {
      v = v * 10 + static_cast<uint64_t>(peek() - '0');
      if (v > kMaxRepeat) fail("a repetition bound above " + std::to_string(kMaxRepeat));
      ++pos_;
    }
    return static_cast<uint32_t>(v);
  }

  // item{lo,hi}: lo copies, then hi - lo nested optional copies (or one right-recursive
  // rule for an unbounded tail), so the matcher's stacks stay shallow.
  void repeat(const std::string& rule, const Sequence& item, uint32_t lo, uint32_t hi, bool unbounded, Sequence& out) {
    if (static_cast<size_t>(item.size()) * std::max(lo, hi) > kMaxSymbols) fail("the grammar is too large");
    for (uint32_t i = 0; i < lo; ++i) out.insert(out.end(), item.begin(), item.end());
    if (unbounded) {
      const uint32_t id = new_rule(rule, {});
      Sequence more = item;
      more.push_back({Symbol::Kind::Rule, id});
      rules_[id] = {more, {}};
      out.push_back({Symbol::Kind::Rule, id});
      return;
    }
    if (hi == lo) return;
    int64_t inner = -1;  // the rule for the remaining optional copies
    for (uint32_t i = lo; i < hi; ++i) {
      Sequence more = item;
      if (inner >= 0) more.push_back({Symbol::Kind::Rule, static_cast<uint32_t>(inner)});
      inner = new_rule(rule, {more, {}});
    }
    out.push_back({Symbol::Kind::Rule, static_cast<uint32_t>(inner)});
  }

  Sequence parse_item(const std::string& rule, int depth) {
    const char c = peek();
    if (c == '"') {
      ++pos_;
      Sequence seq;
      while (peek() != '"') {
        if (at_end()) fail("unterminated string literal");
        const uint32_t cp = parse_char();
        seq.push_back(chars({{{cp, cp}}, false}));
      }
      ++pos_;
      return seq;
    }
    if (c == '[') {
      ++pos_;
      CharSet set;
      if (peek() == '^') ++pos_, set.negated = true;
      while (peek() != ']') {
        if (at_end()) fail("unterminated character class");
        const uint32_t a = parse_char();
        uint32_t b = a;
        if (peek() == '-' && pos_ + 1 < s_.size() && s_[pos_ + 1] != ']') {
          ++pos_;
          b = parse_char();
          if (b < a) fail("a character range with its end before its start");
        }
        set.ranges.emplace_back(a, b);
      }
      ++pos_;
      return {chars(std::move(set))};
    }
    if (c == '.') {
      ++pos_;
      return {chars({{{0, kMaxCodePoint}}, false})};
    }
    if (c == '(') {
      ++pos_;
      std::vector<Sequence> alts = parse_alternatives(rule, depth + 1);
      skip_space();
      if (!consume(")")) fail("expected ')'");
      if (alts.size() == 1) return std::move(alts[0]);
      return {{Symbol::Kind::Rule, new_rule(rule, std::move(alts))}};
    }
    if (name_char(c)) return {{Symbol::Kind::Rule, rule_id(parse_name())}};
    fail(at_end() ? "unexpected end of the grammar" : std::string("unexpected character '") + c + "'");
  }

  // One character of a literal or class: UTF-8, or an escape.
  uint32_t parse_char() {
    if (peek() == '\\') {
      ++pos_;
      const char e = peek();
      ++pos_;
      switch (e) {
        case 'n': return '\n';
        case 'r': return '\r';
        case 't': return '\t';
        case '\\': case '"': case '[': case ']': case '-': case '^': case '/': case '\'': return static_cast<uint8_t>(e);
        case 'x': return parse_hex(2);
        case 'u': return parse_hex(4);
        case 'U': return parse_hex(8);
        default: --pos_; fail(std::string("unknown escape '\\") + e + "'");
      }
    }
    const size_t n = utf8_valid_length(s_, pos_);
    if (n == 0) fail("invalid UTF-8");
    const uint32_t cp = utf8_decode(s_, pos_, n);
    pos_ += n;
    return cp;
  }
  uint32_t parse_hex(int digits) {
    uint32_t v = 0;
    for (int i = 0; i < digits; ++i, ++pos_) {
      const char h = peek();
      const int d = h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10 : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
      if (d < 0) fail("expected " + std::to_string(digits) + " hex digits in an escape");
      v = v * 16 + static_cast<uint32_t>(d);
    }
    if (v > kMaxCodePoint) fail("an escape beyond U+10FFFF");
    return v;
  }

  // A rule reached again before any character is consumed would expand forever.
  void check_left_recursion() const {
    const size_t n = rules_.size();
    std::vector<bool> nullable(n, false);
    for (bool changed = true; changed;) {
      changed = false;
      for (size_t r = 0; r < n; ++r) {
        if (nullable[r]) continue;
        for (const auto& alt : rules_[r])
          if (std::all_of(alt.begin(), alt.end(), [&](const Symbol& s) { return s.kind == Symbol::Kind::Rule && nullable[s.index]; })) {
            nullable[r] = changed = true;
            break;
          }
      }
    }
    std::vector<std::vector<uint32_t>> first(n);  // rules that can start r's text
    for (size_t r = 0; r < n; ++r)
      for (const auto& alt : rules_[r])
        for (const Symbol& s : alt) {
          if (s.kind != Symbol::Kind::Rule) break;
          first[r].push_back(s.index);
          if (!nullable[s.index]) break;
        }
    std::vector<uint8_t> state(n, 0);  // 0 new, 1 on the path, 2 done
    std::vector<std::pair<uint32_t, size_t>> stack;
    for (uint32_t start = 0; start < n; ++start) {
      if (state[start]) continue;
      stack.emplace_back(start, 0);
      state[start] = 1;
      while (!stack.empty()) {
        auto& [r, i] = stack.back();
        if (i == first[r].size()) {
          state[r] = 2;
          stack.pop_back();
          continue;
        }
        const uint32_t next = first[r][i++];
        if (state[next] == 1)
          throw Error("grammar: rule '" + names_[next] +
                      "' is left-recursive (it can reach itself before matching a character; a repetition of "
                      "something that can be empty does too)");
        if (state[next] == 0) {
          state[next] = 1;
          stack.emplace_back(next, 0);
        }
      }
    }
  }

  Grammar flatten(uint32_t root) {
    Grammar g;
    g.char_sets = std::move(sets_);
    g.rule_names = std::move(names_);
    g.root = root;
    g.rules.resize(rules_.size());
    for (size_t r = 0; r < rules_.size(); ++r)
      for (const Sequence& alt : rules_[r]) {
        g.rules[r].push_back(static_cast<uint32_t>(g.symbols.size()));
        g.symbols.insert(g.symbols.end(), alt.begin(), alt.end());
        g.symbols.push_back({Symbol::Kind::End, 0});
      }
    return g;
  }

  std::string_view s_;
  size_t pos_ = 0;
  std::map<std::string, uint32_t> ids_;
  std::vector<std::vector<Sequence>> rules_;
  std::vector<std::string> names_;
  std::vector<bool> defined_;
  std::vector<CharSet> sets_;
};

}  // namespace

Grammar parse_gbnf(std::string_view text) { return Parser(text).parse(); }

}  // namespace minnow::grammar
