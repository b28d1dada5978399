// GBNF grammars, the notation llama.cpp's users write for constrained output:
//   root ::= "{" ws "\"ok\":" ws ("true" | "false") ws "}"
//   ws   ::= [ \t\n]{0,8}
// Parsed into rules of alternatives of symbols; groups and repetitions become generated
// rules, so the matcher (grammar/matcher.hpp) only sees characters and rule references.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace minnow::grammar {

// A set of Unicode code points: inclusive ranges, or everything outside them.
struct CharSet {
  std::vector<std::pair<uint32_t, uint32_t>> ranges;
  bool negated = false;
  bool contains(uint32_t c) const;
  bool intersects(uint32_t lo, uint32_t hi) const;  // some code point of [lo, hi] is in the set
};

struct Symbol {
  enum class Kind : uint8_t { End, Chars, Rule };
  Kind kind;
  uint32_t index;  // Chars: into Grammar::char_sets; Rule: the rule's id
};

// Every alternative of every rule, flattened: a position is an index into `symbols`, and
// each alternative is closed by an End symbol.
struct Grammar {
  std::vector<Symbol> symbols;
  std::vector<std::vector<uint32_t>> rules;  // per rule: where its alternatives start
  std::vector<CharSet> char_sets;
  std::vector<std::string> rule_names;  // generated rules are named after their parent
  uint32_t root = 0;
};

// Throws Error("grammar: ... (line L, column C)") on bad syntax, and on an undefined rule,
// a missing `root`, or left recursion (which the matcher could not expand).
Grammar parse_gbnf(std::string_view text);

}  // namespace minnow::grammar
