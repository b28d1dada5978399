// Template errors name line and column, and no input can crash the engine.
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/error.hpp"
#include "chat/chat_template.hpp"

namespace {

using minnow::chat::render_chat_template;
using minnow::chat::TemplateInputs;

TemplateInputs conversation() {
  TemplateInputs in;
  in.messages = {{"system", "sys"}, {"user", "hi"}, {"assistant", "yo"}};
  in.bos_token = "<s>";
  return in;
}

// The error message of rendering tmpl, or "" when it renders.
std::string error_of(const std::string& tmpl) {
  try {
    render_chat_template(tmpl, conversation());
  } catch (const minnow::Error& e) {
    return e.what();
  }
  return "";
}

TEST(ChatTemplateErrors, NameLineAndColumn) {
  EXPECT_EQ(error_of("a\nb\n{{ 'x' | foo }}"), "template: line 3, column 10: unknown filter 'foo'");
  EXPECT_EQ(error_of("{{ 1 is foo }}"), "template: line 1, column 9: unknown test 'foo'");
  EXPECT_EQ(error_of("{% foo %}"), "template: line 1, column 4: unknown tag 'foo'");
  EXPECT_EQ(error_of("x\n  {{ 1 + }}"), "template: line 2, column 10: unexpected end of print statement");
  EXPECT_EQ(error_of("{% for m in messages %}x"),
            "template: line 1, column 1: unexpected end of template, expected 'endfor' or 'else'");
  EXPECT_EQ(error_of("{% if true %}\n{{ 'abc"), "template: line 2, column 4: unterminated string literal");
  EXPECT_EQ(error_of("ok {{ x"), "template: line 1, column 4: unterminated tag: missing '}}'");
  EXPECT_EQ(error_of("{# note"), "template: line 1, column 1: missing end of comment tag");
  EXPECT_EQ(error_of("{{ (1] }}"), "template: line 1, column 6: unexpected ']', expected ')'");
  EXPECT_EQ(error_of("{{ 1 @ 2 }}"), "template: line 1, column 6: unexpected char '@'");
  // Columns count characters, not bytes.
  EXPECT_EQ(error_of("é{{ x | foo }}"), "template: line 1, column 9: unknown filter 'foo'");
}

TEST(ChatTemplateErrors, RuntimeErrorsNameTheirExpression) {
  EXPECT_EQ(error_of("{{ x + 1 }}"), "template: line 1, column 6: 'x' is undefined");
  EXPECT_EQ(error_of("{{ x.y }}"), "template: line 1, column 5: 'x' is undefined");
  EXPECT_EQ(error_of("{{ messages[0].nope.deeper }}"),
            "template: line 1, column 20: 'dict object' has no attribute 'nope'");
  EXPECT_EQ(error_of("{{ 'a' + 1 }}"), "template: line 1, column 8: can only concatenate str (not \"int\") to str");
  EXPECT_EQ(error_of("{{ 1 // 0 }}"), "template: line 1, column 6: integer division or modulo by zero");
  EXPECT_EQ(error_of("{% for a, b in [1] %}{% endfor %}"), "template: line 1, column 1: 'int' object is not iterable");
}

TEST(ChatTemplateErrors, RaiseExceptionMessageSurfaces) {
  EXPECT_EQ(error_of("\n  {{ raise_exception('Roles must alternate') }}"),
            "template: line 2, column 6: Roles must alternate");
  EXPECT_EQ(error_of("{% if messages[0].role == 'system' %}{{ raise_exception('no system') }}{% endif %}"),
            "template: line 1, column 41: no system");
}

TEST(ChatTemplateErrors, UnknownFilterInsideIfIsOnlyAnErrorWhenReached) {
  // jinja2 defers these checks inside if blocks and inline ifs, so templates can
  // guard optional features; loop and macro bodies are checked eagerly.
  EXPECT_EQ(error_of("{% if false %}{{ x | nosuch }}{% endif %}ok"), "");
  EXPECT_EQ(error_of("{{ x | nosuch if false else 1 }}"), "");
  EXPECT_EQ(error_of("{% if true %}{{ x | nosuch }}{% endif %}"), "template: line 1, column 21: unknown filter 'nosuch'");
  EXPECT_EQ(error_of("{% for i in [] %}{{ x | nosuch }}{% endfor %}"),
            "template: line 1, column 25: unknown filter 'nosuch'");
}

TEST(ChatTemplateErrors, DeepNestingIsAnErrorNotACrash) {
  const auto repeat = [](const std::string& s, int n) {
    std::string out;
    for (int i = 0; i < n; ++i) out += s;
    return out;
  };
  const std::vector<std::string> deep = {
      "{{ " + repeat("(", 5000) + "1" + repeat(")", 5000) + " }}",
      "{{ " + repeat("not ", 5000) + "1 }}",
      "{{ " + repeat("- ", 5000) + "1 }}",
      "{{ a" + repeat(".b", 20000) + " }}",
      "{{ 1" + repeat(" + 1", 20000) + " }}",
      "{{ x" + repeat("|trim", 20000) + " }}",
      "{{ 1" + repeat(" if 1 else 1", 5000) + " }}",
      repeat("{% if 1 %}", 3000) + repeat("{% endif %}", 3000),
      repeat("{% for i in [1] %}", 3000) + repeat("{% endfor %}", 3000),
      "{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}",
      "{% set ns = namespace(x=[]) %}{% for i in range(1000) %}{% set ns.x = [ns.x] %}{% endfor %}",
  };
  for (const auto& tmpl : deep) {
    const std::string err = error_of(tmpl);
    EXPECT_EQ(err.rfind("template: line 1, column ", 0), 0u) << tmpl.substr(0, 40) << ": " << err;
  }
}

TEST(ChatTemplateErrors, ResourceLimits) {
  EXPECT_NE(error_of("{{ range(1000000)|length }}").find("Range too big"), std::string::npos);
  EXPECT_NE(error_of("{{ 'a' * 10000000000 }}").find("result too large"), std::string::npos);
  EXPECT_NE(error_of("{{ 9223372036854775807 + 1 }}").find("integer overflow"), std::string::npos);
  EXPECT_NE(error_of("{{ 99999999999999999999 }}").find("integer literal too large"), std::string::npos);
  EXPECT_NE(error_of("{% set ns = namespace() %}{% set ns.me = ns %}").find("namespace"), std::string::npos);
}

// Every prefix and many random mutations of a real template either render or
// fail with minnow::Error; nothing else may escape (and ASan/UBSan stay quiet).
TEST(ChatTemplateErrors, MalformedTemplatesNeverCrash) {
  const std::string base =
      "{%- if messages[0]['role'] == 'system' -%}{%- set sys = messages[0]['content'] | trim -%}"
      "{%- set msgs = messages[1:] -%}{%- else -%}{%- set msgs = messages -%}{%- endif -%}\n"
      "{% for m in msgs %}{# turn #}{{ '<' ~ m.role ~ '>' }}{{ m.content.strip().split('\\n')[0] }}"
      "{% if loop.last and m.role != 'user' %}{{ raise_exception('bad') }}{% elif not loop.first %}"
      "{{ loop.index }}{% endif %}{% endfor %}{% raw %}{{x}}{% endraw %}"
      "{{ (sys if sys is defined else 'none')|upper }}{{ [1, 2.5, 'x', none][::-1] }}";
  const TemplateInputs in = conversation();
  int rendered = 0, failed = 0;
  auto attempt = [&](const std::string& tmpl) {
    try {
      render_chat_template(tmpl, in);
      ++rendered;
    } catch (const minnow::Error&) {
      ++failed;
    }
  };
  for (std::size_t n = 0; n <= base.size(); ++n) attempt(base.substr(0, n));
  const std::string alphabet = "{}%#-+()[]'\"\\|.:,=~*/ \nifendforsetnotisraw\xc3\xa9\xff";
  std::mt19937 rng(1234);
  for (int round = 0; round < 1500; ++round) {
    std::string t = base;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      const std::size_t at = rng() % (t.size() + 1);
      if (rng() % 2) {
        t.erase(at, 1 + rng() % 4);
      } else {
        t.insert(at, 1, alphabet[rng() % alphabet.size()]);
      }
    }
    attempt(t);
  }
  EXPECT_GT(rendered, 0);
  EXPECT_GT(failed, 0);
}

}  // namespace
