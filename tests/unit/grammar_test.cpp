// GBNF parsing, the matcher over code points, the token constraint over a vocabulary, and
// the sampler with a grammar.
#include <gtest/gtest.h>

#include "grammar_match.hpp"
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "grammar/gbnf.hpp"
#include "grammar/matcher.hpp"
#include "grammar/token_constraint.hpp"
#include "minnow/error.hpp"
#include "runtime/sampler.hpp"
#include "tokenizer/tokenizer.hpp"
#include "tokenizer/utf8.hpp"

namespace minnow::grammar {
namespace {

bool matches(const std::string& gbnf, const std::string& text) { return test::grammar_matches(gbnf, text); }

std::string parse_error(const std::string& gbnf) {
  try {
    parse_gbnf(gbnf);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(GrammarParse, RefusesWithOneLineNamingTheProblem) {
  EXPECT_NE(parse_error("").find("empty"), std::string::npos);
  EXPECT_NE(parse_error("start ::= \"a\"").find("no rule named 'root'"), std::string::npos);
  EXPECT_NE(parse_error("root ::= item").find("'item' is used but not defined"), std::string::npos);
  EXPECT_NE(parse_error("root ::= root \"a\" | \"b\"").find("left-recursive"), std::string::npos);
  EXPECT_NE(parse_error("root ::= (\"a\"?)*").find("left-recursive"), std::string::npos);
  EXPECT_NE(parse_error("root ::= \"abc").find("unterminated string"), std::string::npos);
  EXPECT_NE(parse_error("root ::= [a-").find("unterminated character class"), std::string::npos);
  EXPECT_NE(parse_error("root ::= \"\\q\"").find("unknown escape"), std::string::npos);
  EXPECT_NE(parse_error("root ::= \"a\"{3,2}").find("m <= n"), std::string::npos);
  EXPECT_NE(parse_error("root ::= \"a\"{99999}").find("repetition bound"), std::string::npos);
  EXPECT_NE(parse_error("root ::= (\"a\"").find("expected ')'"), std::string::npos);
  EXPECT_NE(parse_error("root ::= \"a\"\nroot ::= \"b\"").find("defined twice"), std::string::npos);
  EXPECT_NE(parse_error("root ::= \"a\" }").find("line 1, column 14"), std::string::npos);
  EXPECT_NE(parse_error("root ::= " + std::string(300, '(') + "\"a\"" + std::string(300, ')')).find("nested too deeply"), std::string::npos);
  const std::string e = parse_error("root ::= \"a\" %");
  EXPECT_EQ(e.find('\n'), std::string::npos);
}

TEST(GrammarMatch, LiteralsClassesAlternativesAndRepetitions) {
  EXPECT_TRUE(matches(R"(root ::= "yes" | "no")", "yes"));
  EXPECT_FALSE(matches(R"(root ::= "yes" | "no")", "ye"));
  EXPECT_FALSE(matches(R"(root ::= "yes" | "no")", "yess"));
  const std::string num = R"(root ::= "-"? [1-9] [0-9]*)";
  EXPECT_TRUE(matches(num, "-120"));
  EXPECT_TRUE(matches(num, "7"));
  EXPECT_FALSE(matches(num, "012"));
  const std::string word = R"(root ::= [^ \n"]+ " " [a-cx]{2,3})";
  EXPECT_TRUE(matches(word, "héllo ab"));
  EXPECT_TRUE(matches(word, "x axc"));
  EXPECT_FALSE(matches(word, "x a"));
  EXPECT_FALSE(matches(word, "x abca"));
  EXPECT_FALSE(matches(word, "\"q ab"));
  EXPECT_TRUE(matches(R"(root ::= "a"{2} "b"{1,} "c"{0,2} .)", "aabbbcc!"));
  EXPECT_FALSE(matches(R"(root ::= "a"{2} "b"{1,})", "ab"));
  // Escapes, Unicode, comments and bodies over several lines.
  EXPECT_TRUE(matches("root ::= \"\\x41\\u00e9\\n\" # a comment\n  | \"\\t\"\n", "A\xc3\xa9\n"));
  EXPECT_TRUE(matches("root ::= [\\u4e00-\\u9fff]+", "\xe4\xb8\xad\xe6\x96\x87"));
}

TEST(GrammarMatch, RecursionIsBalanced) {
  const std::string parens = "root ::= item*\nitem ::= \"(\" item* \")\"";
  EXPECT_TRUE(matches(parens, "(()(()))()"));
  EXPECT_TRUE(matches(parens, ""));
  EXPECT_FALSE(matches(parens, "(()"));
  EXPECT_FALSE(matches(parens, "())"));
}

TEST(GrammarMatch, LongRepetitionsKeepTheStackShallow) {
  Matcher m(std::make_shared<const Grammar>(parse_gbnf(R"(root ::= "\"" [a-z]* "\"")")));
  States s = m.initial(), next;
  m.advance(s, '"', next);
  s = next;
  const States inside = s;
  for (int i = 0; i < 10000; ++i) {
    m.advance(s, 'a' + i % 26, next);
    ASSERT_FALSE(next.empty());
    s = next;
  }
  EXPECT_EQ(s, inside);  // the same interned stack after every letter
}

TEST(GrammarMatch, LongChainsBeforeACharacterNeitherRecurseNorMultiply) {
  std::string optional = "root ::=";
  for (int i = 0; i < 3000; ++i) optional += " \"x\"?";  // thousands of parses alive: capped
  optional += " \"y\"";
  EXPECT_TRUE(matches(optional, "xxxy"));
  EXPECT_TRUE(matches(optional, "y"));
  std::string chain = "root ::= r0\n";
  for (int i = 0; i < 20000; ++i) chain += "r" + std::to_string(i) + " ::= r" + std::to_string(i + 1) + "\n";
  chain += "r20000 ::= \"z\"\n";
  EXPECT_TRUE(matches(chain, "z"));
  std::string empties = "root ::=";  // 2^40 ways to match nothing, if each were walked
  for (int i = 0; i < 40; ++i) empties += " e";
  empties += " \"q\"\ne ::= \"\" | \"\"";
  EXPECT_TRUE(matches(empties, "q"));
}

// A vocabulary from strings; ids in order; the last is an end-of-turn control token.
class FakeTokenizer : public Tokenizer {
 public:
  explicit FakeTokenizer(std::vector<std::string> pieces) : pieces_(std::move(pieces)) {
    pieces_.push_back("");  // <end>
    eog_ids_ = {static_cast<int32_t>(pieces_.size() - 1)};
    eos_id_ = eog_ids_[0];
  }
  std::vector<int32_t> encode(std::string_view, bool) const override { return {}; }
  std::string_view token_bytes(int32_t id, bool = false) const override { return pieces_[static_cast<size_t>(id)]; }
  std::string_view token_text(int32_t id) const override { return pieces_[static_cast<size_t>(id)]; }
  int vocab_size() const override { return static_cast<int>(pieces_.size()); }

 private:
  std::vector<std::string> pieces_;
};

TEST(GrammarTokens, AllowedEqualsAskingEachTokenAlongAWholeOutput) {
  // "é" is 0xC3 0xA9: split over two tokens, and inside one.
  FakeTokenizer tok({"{", "}", "\"", "a", "ab", "\xc3", "\xa9", "\xc3\xa9", "\"a\"", ":", " ", "  ", "x", "{\"", "\"}", "1", "12"});
  auto trie = std::make_shared<const TokenTrie>(tok);
  auto g = std::make_shared<const Grammar>(parse_gbnf(R"(root ::= "{\"" [a-zé]+ "\":" " "? [0-9]+ "}")"));
  TokenConstraint c(g, trie, tok);
  std::vector<uint8_t> allowed;
  const std::vector<int32_t> path = {13, 5, 6, 4, 7, 2, 9, 10, 16, 1, 17};
  for (int32_t next : path) {
    c.allowed(allowed);
    for (int32_t id = 0; id < tok.vocab_size(); ++id) EXPECT_EQ(allowed[static_cast<size_t>(id)] != 0, c.allows(id)) << id;
    ASSERT_TRUE(c.allows(next)) << next;
    if (next != 17) c.accept(next);
  }
  EXPECT_TRUE(c.complete());
  EXPECT_THROW(c.accept(3), Error);  // nothing can follow a complete output but the end
}

TEST(GrammarTokens, OverlongAndInvalidUtf8NeverSpellAnAllowedCharacter) {
  // 'd' as overlong 2-, 3- and 4-byte forms, whole and split; a surrogate; beyond U+10FFFF.
  FakeTokenizer tok({"d", "\xc1\xa4", "\xe0\x81\xa4", "\xf0\x80\x81\xa4", "\xf0", "\xf0\x80", "\xed\xa0\x80", "\xf4\x90\x80\x80"});
  auto trie = std::make_shared<const TokenTrie>(tok);
  TokenConstraint c(std::make_shared<const Grammar>(parse_gbnf(R"(root ::= [^x]+)")), trie, tok);
  std::vector<uint8_t> allowed;
  c.allowed(allowed);
  EXPECT_EQ(allowed, (std::vector<uint8_t>{1, 0, 0, 0, 1, 0, 0, 0, 0}));  // "\xf0" alone may still become U+10000..
  TokenConstraint d(std::make_shared<const Grammar>(parse_gbnf(R"(root ::= "d")")), trie, tok);
  d.allowed(allowed);
  EXPECT_EQ(allowed, (std::vector<uint8_t>{1, 0, 0, 0, 0, 0, 0, 0, 0}));
}

TEST(GrammarTokens, NothingAllowedForcesTheEnd) {
  FakeTokenizer tok({"a", "b"});
  TokenConstraint c(std::make_shared<const Grammar>(parse_gbnf(R"(root ::= "c")")), std::make_shared<const TokenTrie>(tok), tok);
  std::vector<uint8_t> allowed;
  c.allowed(allowed);
  EXPECT_EQ(allowed, (std::vector<uint8_t>{0, 0, 1}));
}

TEST(GrammarSampler, GreedyTakesTheMostLikelyAllowedToken) {
  FakeTokenizer tok({"no", "yes", "maybe", "n", "y"});
  auto trie = std::make_shared<const TokenTrie>(tok);
  TokenConstraint c(std::make_shared<const Grammar>(parse_gbnf(R"(root ::= "yes" | "no")")), trie, tok);
  SamplingOptions o;
  o.temperature = 0;
  Sampler s(o, tok.vocab_size());
  std::vector<float> logits = {1.0f, 2.0f, 5.0f, 0.5f, 3.0f, 4.0f};
  EXPECT_EQ(s.sample(logits, {}, {}, &c), 4);  // "y" (3.0) beats "yes" (2.0); "maybe" and the end are out
}

TEST(GrammarSampler, DrawsInProportionAmongTheAllowedSurvivors) {
  FakeTokenizer tok({"a", "b", "c", "d"});
  auto trie = std::make_shared<const TokenTrie>(tok);
  auto g = std::make_shared<const Grammar>(parse_gbnf(R"(root ::= [bd])"));
  SamplingOptions o;
  o.temperature = 1.0f;
  o.top_k = 3;  // "d" (the least likely) is filtered out: only "b" survives of the allowed
  o.top_p = 1.0f;
  o.min_p = 0.0f;
  o.seed = 7;
  Sampler s(o, tok.vocab_size());
  const std::vector<float> base = {2.0f, 1.0f, 1.5f, 0.0f, -1.0f};
  std::map<int32_t, int> counts;
  for (int i = 0; i < 2000; ++i) {
    TokenConstraint c(g, trie, tok);
    std::vector<float> logits = base;
    ++counts[s.sample(logits, {}, {}, &c)];
  }
  EXPECT_EQ(counts[1], 2000);
  // Without the filter both allowed tokens come, in proportion e^1 : e^0.
  o.top_k = 0;
  Sampler s2(o, tok.vocab_size());
  counts.clear();
  const int n = 20000;
  for (int i = 0; i < n; ++i) {
    TokenConstraint c(g, trie, tok);
    std::vector<float> logits = base;
    ++counts[s2.sample(logits, {}, {}, &c)];
  }
  const double expect_b = std::exp(1.0) / (std::exp(1.0) + 1.0);
  EXPECT_NEAR(counts[1] / static_cast<double>(n), expect_b, 0.015);
  EXPECT_EQ(counts[1] + counts[3], n);
}

}  // namespace
}  // namespace minnow::grammar
