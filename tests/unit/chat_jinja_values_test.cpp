// The template value model prints values exactly as Python does.
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/error.hpp"
#include "chat/jinja/json_value.hpp"
#include "chat/jinja/template.hpp"
#include "chat/jinja/value_format.hpp"

namespace {

using minnow::chat::jinja::format_float;
using minnow::chat::jinja::Template;
using minnow::chat::jinja::to_repr;
using minnow::chat::jinja::Value;
using minnow::chat::jinja::value_from_json;

TEST(ChatJinjaValues, FloatsPrintLikePythonRepr) {
  EXPECT_EQ(format_float(0.5), "0.5");
  EXPECT_EQ(format_float(2.0), "2.0");
  EXPECT_EQ(format_float(-0.0), "-0.0");
  EXPECT_EQ(format_float(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(format_float(1e15), "1000000000000000.0");
  EXPECT_EQ(format_float(1e16), "1e+16");
  EXPECT_EQ(format_float(0.0001), "0.0001");
  EXPECT_EQ(format_float(0.00001), "1e-05");
  EXPECT_EQ(format_float(1.2345678901234568e+17), "1.2345678901234568e+17");
  EXPECT_EQ(format_float(5e-324), "5e-324");
  EXPECT_EQ(format_float(1.0 / 0.0), "inf");
}

TEST(ChatJinjaValues, ReprQuotesLikePython) {
  EXPECT_EQ(to_repr(Value("it's")), "\"it's\"");
  EXPECT_EQ(to_repr(Value("a\"b'c")), "'a\"b\\'c'");
  EXPECT_EQ(to_repr(Value("x\ny\t\\")), "'x\\ny\\t\\\\'");
  EXPECT_EQ(to_repr(Value("é\x01")), "'é\\x01'");
  EXPECT_EQ(to_repr(Value::list({Value(1), Value(minnow::chat::jinja::None{}), Value(true)}, true)),
            "(1, None, True)");
  EXPECT_EQ(to_repr(Value::list({Value("a")}, true)), "('a',)");
}

TEST(ChatJinjaValues, JsonContextKeepsKeyOrderForTojson) {
  // Tool schemas must keep their key order: Python dicts do, and tojson shows it.
  const auto ctx = nlohmann::ordered_json::parse(
      R"({"tools": [{"name": "f", "arguments": {"z": 1, "a": [true, null, 1.5, "é\n"]}}]})");
  const Template t("{% for tool in tools %}{{ tool | tojson }}{% endfor %}|{{ tools[0].arguments | tojson(indent=2) }}");
  EXPECT_EQ(t.render(value_from_json(ctx)),
            "{\"name\": \"f\", \"arguments\": {\"z\": 1, \"a\": [true, null, 1.5, \"é\\n\"]}}|"
            "{\n  \"z\": 1,\n  \"a\": [\n    true,\n    null,\n    1.5,\n    \"é\\n\"\n  ]\n}");
}

TEST(ChatJinjaValues, ScopingFollowsJinja2) {
  const Value ctx = Value::dict({});
  // Sets inside a loop body stay in that iteration; namespaces carry state out.
  EXPECT_EQ(Template("{% set x = 1 %}{% for i in [1, 2] %}{{ x }}{% set x = 2 %}{{ x }}{% endfor %}{{ x }}").render(ctx),
            "12121");
  EXPECT_EQ(Template("{% set x = 1 %}{% if true %}{% set x = 2 %}{% endif %}{{ x }}").render(ctx), "2");
  EXPECT_EQ(Template("{% set ns = namespace(n=0) %}{% for i in range(5) %}{% set ns.n = ns.n + i %}{% endfor %}{{ ns.n }}")
                .render(ctx),
            "10");
  EXPECT_EQ(Template("{% macro f(a, b='x') %}<{{ a }}{{ b }}>{% endmacro %}{{ f(1) }}{{ f(2, b=3) }}").render(ctx),
            "<1x><23>");
}

TEST(ChatJinjaValues, TemplateIsReusable) {
  const Template t("{{ messages | length }}");
  EXPECT_EQ(t.render(Value::dict({{"messages", Value::list({Value(1), Value(2)})}})), "2");
  EXPECT_EQ(t.render(Value::dict({})), "0");
}

}  // namespace
