// JSON Schema -> GBNF. Each subschema that needs more than one symbol becomes a rule named
// after where it sits (root-items, person-name); shared JSON pieces are fixed rules below.
// Layout of the output text, so the grammar stays unambiguous and finite:
// - no whitespace before or after the whole value, and none before ',' or ':';
// - `ws` (0 to 20 spaces, tabs, newlines) after '{' '[' ',' ':' and before '}' ']': one place
//   a gap, and bounded, so a model cannot pad forever; digit runs are bounded for the same
//   reason (15 before the point, 15 after, 2 in an exponent).
#include "grammar/json_schema.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "base/error.hpp"
#include "tokenizer/utf8.hpp"

namespace minnow {
namespace {

using json = nlohmann::ordered_json;

constexpr uint64_t kMaxRepeat = 1000;  // grammar/gbnf.cpp refuses larger {m,n} bounds
constexpr int kMaxDepth = 100;         // subschemas nested deeper are refused (recursion)

// Shared rules, emitted only when used, with the rules each one refers to.
struct Primitive { const char* name; const char* body; std::vector<const char*> uses; };
const std::vector<Primitive> kPrimitives = {
    {"value", "object | array | string | number | boolean | null",
     {"object", "array", "string", "number", "boolean", "null"}},
    {"object", R"("{" ws ( string ":" ws value ( "," ws string ":" ws value )* ws )? "}")", {"ws", "string", "value"}},
    {"array", R"("[" ws ( value ( "," ws value )* ws )? "]")", {"ws", "value"}},
    {"string", R"("\"" char* "\"")", {"char"}},
    // No \u escape of a surrogate: a pair would count as two characters for minLength, a
    // lone one is not text; the model can write the character itself instead.
    {"char", R"([^"\\\x00-\x1F] | "\\" ( ["\\/bfnrt] | "u" ( [0-9a-cA-CeEfF] [0-9a-fA-F]{3} | [dD] [0-7] [0-9a-fA-F]{2} ) ))", {}},
    {"number", R"("-"? unumber)", {"unumber"}},
    {"unumber", R"(uint ( "." [0-9]{1,15} )? ( [eE] [-+]? [0-9]{1,2} )?)", {"uint"}},
    {"integer", R"("-"? uint)", {"uint"}},
    {"uint", R"("0" | [1-9] [0-9]{0,14})", {}},
    {"boolean", R"("true" | "false")", {}},
    {"null", R"("null")", {}},
    {"ws", R"([ \t\n]{0,20})", {}},
};

// format is an annotation by default in 2020-12, so it is ignored, not enforced; $defs and
// definitions are only read through $ref.
const std::set<std::string> kIgnored = {"title",      "description", "default",  "examples", "$schema",
                                        "$id",        "$comment",    "format",   "deprecated", "readOnly",
                                        "writeOnly",  "$defs",       "definitions"};
const std::set<std::string> kHandled = {"type",     "enum",      "const",     "properties", "required",
                                        "additionalProperties",  "items",     "minItems",   "maxItems",
                                        "minLength", "maxLength", "anyOf",     "oneOf",      "allOf",
                                        "$ref",      "minimum",   "exclusiveMinimum"};
const std::set<std::string> kTypes = {"object", "array", "string", "number", "integer", "boolean", "null"};

// Bytes as a GBNF string literal (UTF-8 passes through).
std::string literal(const std::string& s) {
  std::string out = "\"";
  for (const unsigned char c : s) {
    if (c == '"' || c == '\\') out += '\\', out += static_cast<char>(c);
    else if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c == '\t') out += "\\t";
    else if (c < 0x20 || c == 0x7F) out += "\\x", out += "0123456789ABCDEF"[c >> 4], out += "0123456789ABCDEF"[c & 15];
    else out += static_cast<char>(c);
  }
  return out + "\"";
}

std::string pointer_token(const std::string& k) {  // RFC 6901: ~ -> ~0, / -> ~1
  std::string out;
  for (const char c : k) out += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
  return out;
}

std::string readable(const std::string& s) {  // a name part made of [a-zA-Z0-9-]
  std::string out;
  for (const char c : s) {
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (alnum) out += c;
    else if (!out.empty() && out.back() != '-') out += '-';
    if (out.size() >= 40) break;
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "x" : out;
}

bool is_name(const std::string& e) {
  return !e.empty() && std::all_of(e.begin(), e.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-'; });
}

// x{lo,hi} in the shortest spelling; hi absent: unbounded.
std::string repeat(const std::string& x, uint64_t lo, std::optional<uint64_t> hi) {
  if (!hi) return lo == 0 ? x + "*" : lo == 1 ? x + "+" : x + "{" + std::to_string(lo) + ",}";
  if (*hi == 0) return "";
  if (lo == *hi) return lo == 1 ? x : x + "{" + std::to_string(lo) + "}";
  return x + (lo == 0 && *hi == 1 ? "?" : "{" + std::to_string(lo) + "," + std::to_string(*hi) + "}");
}

bool has_type(const json& v, const std::string& t) {
  if (t == "integer") return v.is_number_integer() || (v.is_number_float() && std::floor(v.get<double>()) == v.get<double>());
  return (t == "number" && v.is_number()) || (t == "string" && v.is_string()) || (t == "boolean" && v.is_boolean()) ||
         (t == "null" && v.is_null()) || (t == "object" && v.is_object()) || (t == "array" && v.is_array());
}

class Converter {
 public:
  explicit Converter(const json& root) : root_(root) {
    for (const auto& p : kPrimitives) taken_.insert(p.name);
  }

  std::string run() {
    rules_.push_back({"root", ""});
    taken_.insert("root");
    refs_["#"] = "root";
    unguarded_ = {"#"};
    rules_[0].second = body(root_, "", "root", 0);
    std::string out;
    for (const auto& [name, b] : rules_)
      if (!name.empty()) out += name + " ::= " + b + "\n";
    for (const auto& p : kPrimitives)
      if (used_.count(p.name)) out += std::string(p.name) + " ::= " + p.body + "\n";
    return out;
  }

 private:
  [[noreturn]] static void fail(const std::string& path, const std::string& what) {
    throw Error("json schema: " + what + " at " + (path.empty() ? std::string("the root") : path));
  }

  std::string use(const std::string& name) {
    if (used_.insert(name).second)
      for (const auto& p : kPrimitives)
        if (p.name == name)
          for (const char* u : p.uses) use(u);
    return name;
  }

  std::string unique(const std::string& hint) {
    std::string name = hint;
    for (int i = 2; taken_.count(name); ++i) name = hint + "-" + std::to_string(i);
    taken_.insert(name);
    return name;
  }
  std::string define(const std::string& hint, const std::string& b) {
    const std::string name = unique(hint);
    rules_.push_back({name, b});
    return name;
  }

  // One symbol for a subschema: a rule of its own unless it already is one. The slot is
  // taken first so that a rule comes out before the rules it uses.
  std::string symbol(const json& s, const std::string& path, const std::string& hint, int depth) {
    const size_t slot = rules_.size();
    const std::string name = unique(hint);
    rules_.push_back({name, ""});
    std::string e = body(s, path, name, depth + 1);
    if (is_name(e)) {
      taken_.erase(name);
      rules_[slot].first.clear();
      return e;
    }
    rules_[slot].second = std::move(e);
    return name;
  }

  std::optional<uint64_t> count(const json& s, const char* key, const std::string& path) {
    if (!s.contains(key)) return std::nullopt;
    const json& v = s[key];
    if (!v.is_number() || v.get<double>() < 0 || std::floor(v.get<double>()) != v.get<double>())
      fail(path, std::string("\"") + key + "\" must be a non-negative integer");
    if (v.get<double>() > kMaxRepeat)
      fail(path, std::string("\"") + key + "\" above " + std::to_string(kMaxRepeat) + " is not supported");
    return static_cast<uint64_t>(v.get<double>());
  }
  std::pair<uint64_t, std::optional<uint64_t>> bounds(const json& s, const char* lo_key, const char* hi_key,
                                                      const std::string& path) {
    const auto lo = count(s, lo_key, path), hi = count(s, hi_key, path);
    if (lo && hi && *lo > *hi) fail(path, std::string("\"") + lo_key + "\" is greater than \"" + hi_key + "\"");
    return {lo.value_or(0), hi};
  }

  // Keywords other than annotations (and the one being handled) must not sit beside it.
  void alone(const json& s, const std::string& key, const std::string& path) {
    for (const auto& [k, v] : s.items())
      if (k != key && !kIgnored.count(k)) fail(path, "\"" + key + "\" together with \"" + k + "\" is not supported");
  }

  std::string body(const json& s, const std::string& path, const std::string& hint, int depth) {
    if (depth > kMaxDepth) fail(path, "the schema is nested too deeply");
    if (s.is_boolean()) {
      if (!s.get<bool>()) fail(path, "the schema false accepts nothing");
      return use("value");
    }
    if (!s.is_object()) fail(path, "a schema must be an object or a boolean");
    for (const auto& [k, v] : s.items())
      if (!kIgnored.count(k) && !kHandled.count(k)) fail(path, "unsupported keyword \"" + k + "\"");
    if (s.contains("$ref")) {
      alone(s, "$ref", path);
      return ref(s["$ref"], path + "/$ref", depth);
    }
    // oneOf is taken as anyOf: that only one branch matches is not enforced.
    for (const char* key : {"anyOf", "oneOf"}) {
      if (!s.contains(key)) continue;
      alone(s, key, path);
      const json& alts = s[key];
      if (!alts.is_array() || alts.empty()) fail(path, std::string("\"") + key + "\" must be a non-empty array");
      std::string e;
      for (size_t i = 0; i < alts.size(); ++i)
        e += (i ? " | " : "") + symbol(alts[i], path + "/" + key + "/" + std::to_string(i), hint + "-" + std::to_string(i), depth);
      return e;
    }
    if (s.contains("allOf")) {
      alone(s, "allOf", path);
      if (!s["allOf"].is_array() || s["allOf"].size() != 1) fail(path, "\"allOf\" with other than one subschema is not supported");
      return body(s["allOf"][0], path + "/allOf/0", hint, depth + 1);
    }
    std::vector<std::string> types;
    if (s.contains("type")) {
      const json& t = s["type"];
      for (const json& x : t.is_array() ? t : json::array({t})) {
        if (!x.is_string() || !kTypes.count(x.get<std::string>())) fail(path + "/type", "unknown type " + x.dump());
        types.push_back(x.get<std::string>());
      }
      if (types.empty()) fail(path + "/type", "\"type\" is an empty list");
    }
    if (s.contains("enum") || s.contains("const")) return literals(s, types, path);
    if (types.empty()) {  // no type: take the one the keywords describe (a subset of the values)
      auto any = [&](std::initializer_list<const char*> ks) { return std::any_of(ks.begin(), ks.end(), [&](const char* k) { return s.contains(k); }); };
      if (any({"properties", "additionalProperties", "required"})) types = {"object"};
      else if (any({"items", "minItems", "maxItems"})) types = {"array"};
      else if (any({"minLength", "maxLength"})) types = {"string"};
      else if (any({"minimum", "exclusiveMinimum"})) types = {"number"};
      else return use("value");
    }
    if (types.size() == 1) return typed(s, types[0], path, hint, depth);
    std::string e;
    for (const auto& t : types) {
      const std::string x = typed(s, t, path, hint + "-" + t, depth);
      e += (e.empty() ? "" : " | ") + (is_name(x) ? x : define(hint + "-" + t, x));
    }
    return e;
  }

  std::string literals(const json& s, const std::vector<std::string>& types, const std::string& path) {
    json values = json::array();
    if (s.contains("enum")) {
      if (!s["enum"].is_array()) fail(path + "/enum", "\"enum\" must be an array");
      values = s["enum"];
      if (values.empty()) fail(path + "/enum", "\"enum\" is empty");
    }
    if (s.contains("const")) {
      if (s.contains("enum") && std::find(values.begin(), values.end(), s["const"]) == values.end())
        fail(path, "\"const\" is not one of \"enum\"");
      values = json::array({s["const"]});
    }
    std::string e;
    for (const json& v : values)
      if (types.empty() || std::any_of(types.begin(), types.end(), [&](const std::string& t) { return has_type(v, t); }))
        e += (e.empty() ? "" : " | ") + literal(v.dump());
    if (e.empty()) fail(path, "no value of \"enum\" or \"const\" has the schema's \"type\"");
    return e;
  }

  std::string typed(const json& s, const std::string& t, const std::string& path, const std::string& hint, int depth) {
    if (t == "null" || t == "boolean") return use(t);
    if (t == "integer" || t == "number") {
      // Of the bounds only the trivial ones: no minus sign, and for integers also no 0.
      auto is = [&](const char* k, double v) { return s.contains(k) && s[k].is_number() && s[k].get<double>() == v; };
      const bool nonneg = is("minimum", 0), positive = t == "integer" && (is("minimum", 1) || is("exclusiveMinimum", 0));
      for (const char* k : {"minimum", "exclusiveMinimum"})
        if (s.contains(k) && ((!nonneg && !positive) || (s.contains("minimum") && s.contains("exclusiveMinimum"))))
          fail(path, std::string("\"") + k + "\" " + s[k].dump() + " on " + (t == "number" ? "a number" : "an integer") +
                         " is not supported (only minimum 0, or for an integer minimum 1 or exclusiveMinimum 0)");
      if (t == "number") return use(nonneg ? "unumber" : "number");
      return nonneg ? use("uint") : positive ? "[1-9] [0-9]{0,14}" : use("integer");
    }
    if (t == "string") {
      const auto [lo, hi] = bounds(s, "minLength", "maxLength", path);
      if (lo == 0 && !hi) return use("string");
      const std::string chars = hi == 0u ? "" : repeat(use("char"), lo, hi) + " ";
      return "\"\\\"\" " + chars + "\"\\\"\"";
    }
    const auto saved = std::exchange(unguarded_, {});  // past '{' or '[': a $ref loop is fine
    std::string e = t == "array" ? array(s, path, hint, depth) : object(s, path, hint, depth);
    unguarded_ = saved;
    return e;
  }

  std::string array(const json& s, const std::string& path, const std::string& hint, int depth) {
    const auto [lo, hi] = bounds(s, "minItems", "maxItems", path);
    use("ws");
    if (hi == 0u) return R"("[" ws "]")";
    if (s.contains("items") && s["items"].is_array()) fail(path + "/items", "\"items\" as a list (tuple) is not supported");
    const std::string item = s.contains("items") ? symbol(s["items"], path + "/items", hint + "-item", depth) : use("value");
    const std::string more = repeat("( \",\" ws " + item + " )", lo ? lo - 1 : 0, hi ? std::optional(*hi - 1) : std::nullopt);
    const std::string items = item + (more.empty() ? "" : " " + more);
    return lo == 0 ? "\"[\" ws ( " + items + " ws )? \"]\"" : "\"[\" ws " + items + " ws \"]\"";
  }

  std::string object(const json& s, const std::string& path, const std::string& hint, int depth) {
    const json* props = s.contains("properties") ? &s["properties"] : nullptr;
    if (props && !props->is_object()) fail(path + "/properties", "\"properties\" must be an object");
    std::vector<std::string> required;
    const json& req = s.contains("required") ? s["required"] : json::array();
    for (const json& r : req.is_array() ? req : json::array({nullptr})) {
      if (!r.is_string()) fail(path + "/required", "\"required\" must be an array of strings");
      required.push_back(r.get<std::string>());
    }
    // Further keys: those of additionalProperties; when it is absent, none beside declared
    // properties (what a model should write), any beside none.
    const json extra = s.contains("additionalProperties") ? s["additionalProperties"] : json(props == nullptr);
    if (!props && required.empty() && extra == json(true)) return use("object");
    std::string extra_value;
    if (extra != json(false)) extra_value = symbol(extra, path + "/additionalProperties", hint + "-extra", depth);

    struct Prop { std::string name, value; bool required; };
    std::vector<Prop> list;
    auto is_required = [&](const std::string& k) { return std::find(required.begin(), required.end(), k) != required.end(); };
    if (props)
      for (const auto& [k, v] : props->items())
        list.push_back({k, symbol(v, path + "/properties/" + pointer_token(k), hint + "-" + readable(k), depth), is_required(k)});
    for (const auto& r : required)  // required but undeclared: its value is an extra one
      if ((!props || !props->contains(r)) && std::none_of(list.begin(), list.end(), [&](const Prop& p) { return p.name == r; })) {
        if (extra_value.empty()) fail(path + "/required", "required property \"" + r + "\" is not in \"properties\"");
        list.push_back({r, extra_value, true});
      }

    use("ws");
    std::string tail_first = "\"}\"", tail_more = "ws \"}\"";
    if (!extra_value.empty()) {
      std::vector<std::string> names;
      for (const auto& p : list) names.push_back(p.name);
      const std::string pair = (names.empty() ? use("string") : key_rule(names, hint + "-key")) + " \":\" ws " + extra_value;
      tail_first = "( " + pair + " ( \",\" ws " + pair + " )* ws )? \"}\"";
      tail_more = "( \",\" ws " + pair + " )* ws \"}\"";
    }
    // rest(i, first): properties i.. and the closing brace; `first` when nothing has been
    // written yet (no comma before the next pair). A rule per optional property and flag.
    std::map<std::pair<size_t, bool>, std::string> memo;
    auto rest = [&](auto& self, size_t i, bool first) -> std::string {
      if (i == list.size()) return first ? tail_first : tail_more;
      const std::string pair = std::string(first ? "" : "\",\" ws ") + literal(json(list[i].name).dump() + ":") + " ws " + list[i].value;
      if (list[i].required) return pair + " " + self(self, i + 1, false);
      auto& name = memo[{i, first}];
      if (name.empty()) name = define(hint + (first ? "-from-" : "-then-") + std::to_string(i), pair + " " + self(self, i + 1, false) + " | " + self(self, i + 1, first));
      return name;
    };
    return "\"{\" ws " + rest(rest, 0, true);
  }

  // A JSON string that is none of `names`: a trie over their characters, one rule a node.
  // Along a name only the characters themselves may be written (no \u spelling of them).
  std::string key_rule(const std::vector<std::string>& names, const std::string& hint) {
    struct Node { std::map<std::string, size_t> kids; bool end = false; };
    std::vector<Node> trie(1);
    for (const auto& n : names) {
      size_t at = 0;
      for (size_t i = 0; i < n.size();) {
        const size_t len = std::clamp<size_t>(utf8_sequence_length(static_cast<uint8_t>(n[i])), 1, n.size() - i);
        const std::string c = n.substr(i, len);
        i += len;
        if (!trie[at].kids.count(c)) trie[at].kids[c] = trie.size(), trie.emplace_back();
        at = trie[at].kids[c];
      }
      trie[at].end = true;
    }
    std::vector<std::string> rule(trie.size());
    for (size_t i = 0; i < trie.size(); ++i) rule[i] = define(hint + (i ? "-" + std::to_string(i) : ""), "");
    const size_t first = rules_.size() - trie.size();
    for (size_t i = 0; i < trie.size(); ++i) {
      std::string alts, other = "[^\"\\\\\\x00-\\x1F";
      for (const auto& [c, kid] : trie[i].kids) {
        const std::string spelled = json(c).dump();  // the character as JSON writes it
        alts += literal(spelled.substr(1, spelled.size() - 2)) + " " + rule[kid] + " | ";
        if (spelled.size() == c.size() + 2) other += (c.size() == 1 && std::string("[]-^").find(c[0]) != std::string::npos ? "\\" : "") + c;
      }
      rules_[first + i].second = "( " + alts + other + "] " + use("char") + "* )" + (trie[i].end ? "" : "?");
    }
    return define(hint + "-string", "\"\\\"\" " + rule[0] + " \"\\\"\"");
  }

  std::string ref(const json& r, const std::string& path, int depth) {
    if (!r.is_string()) fail(path, "\"$ref\" must be a string");
    const std::string target = r.get<std::string>();
    if (std::find(unguarded_.begin(), unguarded_.end(), target) != unguarded_.end())
      fail(path, "\"$ref\" " + r.dump() + " reaches itself before any object or array");
    if (auto it = refs_.find(target); it != refs_.end()) return it->second;
    std::string defs, token;
    for (const std::string key : {"$defs", "definitions"})
      if (target.rfind("#/" + key + "/", 0) == 0) defs = key, token = target.substr(key.size() + 3);
    if (defs.empty() || token.empty() || token.find('/') != std::string::npos)
      fail(path, "\"$ref\" " + r.dump() + " is not supported (only \"#\", \"#/$defs/NAME\", \"#/definitions/NAME\")");
    std::string name;  // undo RFC 6901 escapes
    for (size_t i = 0; i < token.size(); ++i)
      name += token[i] == '~' && i + 1 < token.size() ? (token[++i] == '1' ? '/' : '~') : token[i];
    if (!root_.is_object() || !root_.contains(defs) || !root_[defs].is_object() || !root_[defs].contains(name))
      fail(path, "\"$ref\" " + r.dump() + " does not resolve");
    const std::string rule = define(readable(name), "");
    const size_t slot = rules_.size() - 1;
    refs_[target] = rule;
    unguarded_.push_back(target);
    std::string b = body(root_[defs][name], "/" + defs + "/" + pointer_token(name), rule, depth + 1);
    unguarded_.pop_back();
    rules_[slot].second = std::move(b);
    return rule;
  }

  const json& root_;
  std::vector<std::pair<std::string, std::string>> rules_;  // name ("": dropped), body
  std::set<std::string> taken_, used_;
  std::map<std::string, std::string> refs_;  // $ref -> its rule
  std::vector<std::string> unguarded_;       // $refs entered since the last '{' or '['
};

}  // namespace

std::string json_schema_to_gbnf(const nlohmann::ordered_json& schema) {
  try {
    return Converter(schema).run();
  } catch (const nlohmann::json::exception& e) {
    throw Error(std::string("json schema: ") + e.what());
  }
}

std::string json_schema_to_gbnf(const nlohmann::json& schema) { return json_schema_to_gbnf(nlohmann::ordered_json(schema)); }

std::string json_object_gbnf() { return json_schema_to_gbnf(nlohmann::ordered_json{{"type", "object"}}); }

}  // namespace minnow
