// JSON Schema -> GBNF: the text made for small schemas, the JSON texts its grammar accepts
// and refuses (through the GBNF parser and matcher), and the one-line refusals.
#include <gtest/gtest.h>

#include "grammar_match.hpp"
#include <memory>
#include <string>
#include <vector>

#include "grammar/gbnf.hpp"
#include "grammar/json_schema.hpp"
#include "grammar/matcher.hpp"
#include "minnow/error.hpp"
#include "tokenizer/utf8.hpp"

namespace minnow {
namespace {

using ojson = nlohmann::ordered_json;

std::string gbnf(const std::string& schema) { return json_schema_to_gbnf(ojson::parse(schema)); }

bool accepts(const std::string& grammar, const std::string& text) { return test::grammar_matches(grammar, text); }

std::string error_of(const std::string& schema) {
  try {
    gbnf(schema);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::string rule(const std::string& g, const std::string& name) {  // the body of one rule
  const size_t at = g.find(name + " ::= ");
  if (at == std::string::npos || (at > 0 && g[at - 1] != '\n')) return "";
  const size_t start = at + name.size() + 5;
  return g.substr(start, g.find('\n', start) - start);
}

TEST(JsonSchema, RequiredPropertiesInDeclaredOrder) {
  const std::string g = gbnf(R"({"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer"}},
                                 "required":["name","age"]})");
  EXPECT_EQ(rule(g, "root"), R"("{" ws "\"name\":" ws string "," ws "\"age\":" ws integer ws "}")");
  EXPECT_NE(rule(g, "ws"), "");
  EXPECT_TRUE(accepts(g, R"({"name":"Ann","age":41})"));
  EXPECT_TRUE(accepts(g, "{\n  \"name\": \"A\\\"n\\u00e9\",\n  \"age\": -3\n}"));
  EXPECT_FALSE(accepts(g, R"({"age":41,"name":"Ann"})"));
  EXPECT_FALSE(accepts(g, R"({"name":"Ann"})"));
  EXPECT_FALSE(accepts(g, R"({"name":"Ann","age":41,"x":1})"));
  EXPECT_FALSE(accepts(g, R"({"name":"Ann","age":4.5})"));
  EXPECT_FALSE(accepts(g, R"( {"name":"Ann","age":41})"));  // nothing around the value
  // The sorted-key json overload still works (keys alphabetical).
  const std::string sorted = json_schema_to_gbnf(nlohmann::json::parse(R"({"properties":{"b":{},"a":{}},"required":["a","b"]})"));
  EXPECT_LT(sorted.find("\\\"a\\\""), sorted.find("\\\"b\\\""));
}

TEST(JsonSchema, AllOptionalPropertiesGetTheCommasRight) {
  const std::string g = gbnf(R"({"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"boolean"},"c":{"type":"null"}}})");
  for (const char* ok : {"{}", "{ }", R"({"a":1})", R"({"b":true})", R"({"c":null})", R"({"a":1,"b":false})",
                         R"({"a":1,"c":null})", R"({"b":true, "c":null})", R"({ "a": 1, "b": true, "c": null })"})
    EXPECT_TRUE(accepts(g, ok)) << ok;
  for (const char* bad : {"{,}", R"({"a":1,})", R"({,"a":1})", R"({"b":true,"a":1})", R"({"a":1"b":true})",
                          R"({"a":1,"a":1})", R"({"d":1})"})
    EXPECT_FALSE(accepts(g, bad)) << bad;
  EXPECT_LT(g.size(), 2000u);
}

TEST(JsonSchema, ManyOptionalPropertiesStayLinear) {
  ojson s = {{"type", "object"}, {"properties", ojson::object()}};
  for (int i = 0; i < 200; ++i) s["properties"][std::string("p").append(std::to_string(i))] = {{"type", "integer"}};
  const std::string g = json_schema_to_gbnf(s);
  EXPECT_LT(g.size(), 200u * 200);
  EXPECT_TRUE(accepts(g, R"({"p3":1,"p150":2,"p199":3})"));
  EXPECT_FALSE(accepts(g, R"({"p150":2,"p3":1})"));
}

TEST(JsonSchema, EnumAndConstLiteralsAreEscaped) {
  const std::string g = gbnf(R"({"enum":["a\"b\\c", 3, null, true, {"k":[1]}, "line\nnext"]})");
  EXPECT_NE(g.find(R"("\"a\\\"b\\\\c\"")"), std::string::npos) << g;
  EXPECT_TRUE(accepts(g, R"("a\"b\\c")"));
  EXPECT_TRUE(accepts(g, "3"));
  EXPECT_TRUE(accepts(g, "null"));
  EXPECT_TRUE(accepts(g, R"({"k":[1]})"));
  EXPECT_TRUE(accepts(g, R"("line\nnext")"));
  EXPECT_FALSE(accepts(g, R"("a\"b\\")"));
  EXPECT_FALSE(accepts(g, "false"));
  // enum values of another type than "type" are left out; const is one literal.
  EXPECT_EQ(rule(gbnf(R"({"type":"string","enum":["x",1]})"), "root"), R"("\"x\"")");
  EXPECT_EQ(rule(gbnf(R"({"const":"\u00e9t\u00e9"})"), "root"), "\"\\\"été\\\"\"");
}

TEST(JsonSchema, RecursiveRefIsAFiniteGrammar) {
  const std::string g = gbnf(R"({"$ref":"#/$defs/node","$defs":{"node":{"type":"object",
      "properties":{"value":{"type":"integer"},"children":{"type":"array","items":{"$ref":"#/$defs/node"}}},
      "required":["value"]}}})");
  EXPECT_LT(g.size(), 3000u);
  EXPECT_EQ(rule(g, "root"), "node");
  EXPECT_TRUE(accepts(g, R"({"value":1,"children":[{"value":2},{"value":3,"children":[{"value":4,"children":[]}]}]})"));
  EXPECT_FALSE(accepts(g, R"({"value":1,"children":[{"children":[]}]})"));
  // The root itself, and draft-7 definitions.
  const std::string list = gbnf(R"({"type":"object","properties":{"next":{"anyOf":[{"$ref":"#"},{"type":"null"}]}},"required":["next"]})");
  EXPECT_TRUE(accepts(list, R"({"next":{"next":{"next":null}}})"));
  EXPECT_TRUE(accepts(gbnf(R"({"definitions":{"a b":{"type":"boolean"}},"items":{"$ref":"#/definitions/a b"}})"), "[true,false]"));
}

TEST(JsonSchema, ArraysStringsNumbersAndUnions) {
  const std::string arr = gbnf(R"({"type":"array","items":{"type":"integer"},"minItems":2,"maxItems":3})");
  EXPECT_FALSE(accepts(arr, "[1]"));
  EXPECT_TRUE(accepts(arr, "[1,2]"));
  EXPECT_TRUE(accepts(arr, "[ 1, 2, 3 ]"));
  EXPECT_FALSE(accepts(arr, "[1,2,3,4]"));
  const std::string opt = gbnf(R"({"type":"array","maxItems":1})");
  EXPECT_TRUE(accepts(opt, "[]"));
  EXPECT_TRUE(accepts(opt, R"([{"x":[null]}])"));
  EXPECT_FALSE(accepts(opt, "[1,2]"));
  EXPECT_TRUE(accepts(gbnf(R"({"type":"array","maxItems":0})"), "[ ]"));

  const std::string str = gbnf(R"({"type":"string","minLength":2,"maxLength":3})");
  EXPECT_FALSE(accepts(str, R"("a")"));
  EXPECT_TRUE(accepts(str, R"("a\n")"));
  EXPECT_TRUE(accepts(str, R"("\u00e9é\"")"));
  EXPECT_FALSE(accepts(str, R"("abcd")"));
  EXPECT_FALSE(accepts(gbnf(R"({"type":"string"})"), "\"a\nb\""));  // raw control character
  EXPECT_FALSE(accepts(gbnf(R"({"type":"string"})"), R"("\ud83d\ude00")"));  // no surrogate escapes
  EXPECT_TRUE(accepts(gbnf(R"({"type":"string","maxLength":0})"), R"("")"));

  const std::string num = gbnf(R"({"type":"number"})");
  for (const char* ok : {"0", "-0.5", "12e3", "1.25E-7", "123456789012345"}) EXPECT_TRUE(accepts(num, ok)) << ok;
  for (const char* bad : {"01", "1.", ".5", "+1", "1e", "1234567890123456", "NaN"}) EXPECT_FALSE(accepts(num, bad)) << bad;
  EXPECT_FALSE(accepts(gbnf(R"({"type":"integer","minimum":0})"), "-1"));
  EXPECT_FALSE(accepts(gbnf(R"({"type":"integer","exclusiveMinimum":0})"), "0"));

  const std::string u = gbnf(R"({"type":["string","null"],"maxLength":1})");
  EXPECT_TRUE(accepts(u, "null"));
  EXPECT_TRUE(accepts(u, R"("x")"));
  EXPECT_FALSE(accepts(u, R"("xy")"));
  const std::string any = gbnf(R"({"anyOf":[{"type":"boolean"},{"type":"array","items":{"type":"string"}}]})");
  EXPECT_TRUE(accepts(any, R"(["a","b"])"));
  EXPECT_TRUE(accepts(any, "false"));
  EXPECT_FALSE(accepts(any, "1"));
  EXPECT_TRUE(accepts(gbnf(R"({"allOf":[{"type":"null"}]})"), "null"));
}

TEST(JsonSchema, AdditionalPropertiesAreOtherKeys) {
  const std::string g = gbnf(R"({"type":"object","properties":{"id":{"type":"integer"},"ids":{"type":"boolean"}},
                                 "required":["id"],"additionalProperties":{"type":"string"}})");
  EXPECT_TRUE(accepts(g, R"({"id":1})"));
  EXPECT_TRUE(accepts(g, R"({"id":1,"ids":true,"x":"y","i":"","idx":"z","idsx":"w","":"e"})"));
  EXPECT_FALSE(accepts(g, R"({"id":1,"x":2})"));
  EXPECT_FALSE(accepts(g, R"({"id":1,"id":"again"})"));  // a declared key is not an extra one
  EXPECT_FALSE(accepts(g, R"({"id":1,"ids":"again"})"));
  const std::string map = gbnf(R"({"type":"object","additionalProperties":{"type":"integer"}})");
  EXPECT_TRUE(accepts(map, R"({"a":1,"b":2})"));
  EXPECT_TRUE(accepts(map, "{}"));
  EXPECT_FALSE(accepts(map, R"({"a":"1"})"));
  EXPECT_EQ(rule(gbnf(R"({"type":"object"})"), "root"), "object");
  EXPECT_EQ(rule(gbnf(R"({"type":"object","additionalProperties":false})"), "root"), R"("{" ws "}")");
  // Required but undeclared: an extra key that must be there.
  const std::string req = gbnf(R"({"type":"object","required":["k"]})");
  EXPECT_TRUE(accepts(req, R"({"k":[1],"z":2})"));
  EXPECT_FALSE(accepts(req, R"({"z":2})"));
}

TEST(JsonSchema, RefusesWithOneLineNamingTheKeywordAndPath) {
  struct Case { const char* schema; const char* needle; };
  const std::vector<Case> cases = {
      {R"({"properties":{"zip":{"type":"string","pattern":"^[0-9]{5}$"}}})", "unsupported keyword \"pattern\" at /properties/zip"},
      {R"({"type":"object","patternProperties":{}})", "unsupported keyword \"patternProperties\" at the root"},
      {R"({"items":{"not":{}}})", "unsupported keyword \"not\" at /items"},
      {R"({"if":{},"then":{},"else":{}})", "unsupported keyword \"if\""},
      {R"({"type":"array","uniqueItems":true})", "unsupported keyword \"uniqueItems\""},
      {R"({"type":"array","contains":{}})", "unsupported keyword \"contains\""},
      {R"({"type":"array","prefixItems":[{}]})", "unsupported keyword \"prefixItems\""},
      {R"({"type":"object","propertyNames":{}})", "unsupported keyword \"propertyNames\""},
      {R"({"type":"object","dependentRequired":{}})", "unsupported keyword \"dependentRequired\""},
      {R"({"type":"object","minProperties":1})", "unsupported keyword \"minProperties\""},
      {R"({"$defs":{"n":{"type":"number","maximum":3}},"$ref":"#/$defs/n"})", "unsupported keyword \"maximum\" at /$defs/n"},
      {R"({"anyOf":[{"type":"integer","multipleOf":2}]})", "unsupported keyword \"multipleOf\" at /anyOf/0"},
      {R"({"properties":{"a/b~":{"type":"integer","minimum":5}}})", "\"minimum\" 5 on an integer is not supported (only minimum 0, or for an integer minimum 1 or exclusiveMinimum 0) at /properties/a~1b~0"},
      {R"({"type":"number","exclusiveMinimum":1})", "\"exclusiveMinimum\" 1 on a number"},
      {R"({"allOf":[{},{}]})", "\"allOf\" with other than one subschema"},
      {R"({"$ref":"https://example.com/s.json"})", "not supported"},
      {R"({"$ref":"#/$defs/missing"})", "does not resolve at /$ref"},
      {R"({"$defs":{"a":{"anyOf":[{"$ref":"#/$defs/a"},{"type":"null"}]}},"$ref":"#/$defs/a"})", "reaches itself"},
      {R"({"type":"strin"})", "unknown type \"strin\" at /type"},
      {R"({"items":false})", "the schema false accepts nothing at /items"},
      {R"({"type":"array","maxItems":5000})", "\"maxItems\" above 1000"},
      {R"({"type":"string","minLength":3,"maxLength":2})", "\"minLength\" is greater than \"maxLength\""},
      {R"({"type":"integer","anyOf":[{}]})", "\"anyOf\" together with \"type\""},
      {R"({"type":"object","properties":{},"additionalProperties":false,"required":["x"]})", "required property \"x\" is not in \"properties\""},
      {R"({"type":"string","enum":[1,2]})", "no value of \"enum\""},
      {R"({"enum":[]})", "\"enum\" is empty at /enum"},
      {R"(3)", "a schema must be an object or a boolean"},
  };
  for (const auto& c : cases) {
    const std::string e = error_of(c.schema);
    EXPECT_NE(e.find(c.needle), std::string::npos) << c.schema << " -> " << e;
    EXPECT_EQ(e.rfind("json schema: ", 0), 0u) << e;
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  }
  EXPECT_THROW(json_schema_to_gbnf(ojson(false)), Error);
}

TEST(JsonSchema, AnnotationsAreIgnored) {
  const std::string g = gbnf(R"({"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"x","title":"t",
      "description":"d","type":"string","format":"email","default":"a","examples":["b"],"$comment":"c",
      "deprecated":false,"readOnly":true,"writeOnly":false})");
  EXPECT_EQ(rule(g, "root"), "string");
  EXPECT_EQ(rule(gbnf("{}"), "root"), "value");
  EXPECT_EQ(rule(json_schema_to_gbnf(ojson(true)), "root"), "value");
}

TEST(JsonSchema, JsonObjectGrammar) {
  const std::string g = json_object_gbnf();
  EXPECT_FALSE(g.empty());
  EXPECT_EQ(g.rfind("root ::= ", 0), 0u);
  EXPECT_TRUE(accepts(g, R"({"a":[1,2.5,{"b":null}],"c":"d\u0041","e":true})"));
  EXPECT_TRUE(accepts(g, "{ }"));
  EXPECT_FALSE(accepts(g, "[1]"));
  EXPECT_FALSE(accepts(g, "{\"a\":1" + std::string(30, ' ') + "}"));  // whitespace is bounded
  EXPECT_TRUE(accepts(gbnf("{}"), R"([[["deep"]],-1e5,false])"));
}

// Every grammar the converter makes for schemas like tests/reference/json_schema_cases.py
// parses (no undefined rule, no left recursion, bounds in range).
TEST(JsonSchema, GrammarsParse) {
  const char* schemas[] = {
      R"({"type":"object","properties":{"name":{"type":"string"},"address":{"type":"object","properties":{"street":{"type":"string"},"zip":{"type":"string","minLength":5,"maxLength":5}},"required":["street"]}},"required":["name","address"]})",
      R"({"type":"array","items":{"type":"object","properties":{"id":{"type":"integer"},"tags":{"type":"array","items":{"type":"string"},"maxItems":3}},"required":["id"]},"minItems":1})",
      R"({"enum":["red","green",1,2.5,null,true]})",
      R"({"type":"object","properties":{"kind":{"const":"circle"},"r":{"type":"number","minimum":0}},"required":["kind","r"],"additionalProperties":false})",
      R"({"type":["string","null","integer","boolean","array","object"]})",
      R"({"oneOf":[{"type":"string","maxLength":8},{"type":"object","properties":{"a":{}},"additionalProperties":true}]})",
      R"({"$defs":{"expr":{"anyOf":[{"type":"number"},{"type":"object","properties":{"op":{"enum":["+","*"]},"args":{"type":"array","items":{"$ref":"#/$defs/expr"},"minItems":2,"maxItems":2}},"required":["op","args"]}]}},"$ref":"#/$defs/expr"})",
      R"({"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}},"required":["b"],"additionalProperties":{"type":"array"}})",
      R"({"type":"object","properties":{"\u00e9t\u00e9":{"type":"string"},"x-y z":{"type":"integer"},"q\"":{}},"additionalProperties":true})",
      R"({"definitions":{"root":{"type":"string"},"string":{"type":"integer"}},"type":"array","items":{"anyOf":[{"$ref":"#/definitions/root"},{"$ref":"#/definitions/string"}]}})",
      R"({"type":"string","maxLength":1000})",
      R"({"type":"object","properties":{"[a-^]\\":{}},"additionalProperties":true})",
      "{}",
      "true",
  };
  for (const char* s : schemas) {
    const std::string g = gbnf(s);
    EXPECT_NO_THROW(grammar::parse_gbnf(g)) << s << "\n" << g;
  }
  EXPECT_TRUE(accepts(gbnf(schemas[6]), R"({"op":"+","args":[1,{"op":"*","args":[2,3]}]})"));
  EXPECT_TRUE(accepts(gbnf(schemas[8]), R"({"été":"x","x-y z":3,"q\"":1,"qq":[]})"));
  EXPECT_FALSE(accepts(gbnf(schemas[8]), R"({"q\"":1,"q\"":2})"));
  EXPECT_TRUE(accepts(gbnf(schemas[9]), R"(["a",1])"));
  EXPECT_TRUE(accepts(gbnf(schemas[11]), R"({"[a-^]\\":1,"[a-^":2,"[a-^]\\x":3})"));
  EXPECT_FALSE(accepts(gbnf(schemas[11]), R"({"[a-^]\\":1,"[a-^]\\":2})"));
}

}  // namespace
}  // namespace minnow
