#include "server/tool_calls.hpp"

#include <algorithm>
#include <random>

#include "base/error.hpp"
#include "grammar/json_schema.hpp"

namespace minnow::server {
namespace {

using json = nlohmann::ordered_json;
constexpr std::string_view kOpen = "<tool_call>", kClose = "</tool_call>";

std::string trim(std::string_view s) {
  const size_t a = s.find_first_not_of(" \t\r\n");
  if (a == std::string_view::npos) return {};
  return std::string(s.substr(a, s.find_last_not_of(" \t\r\n") - a + 1));
}

std::string call_id() {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(rng()));
  return std::string("call_") + hex;
}

}  // namespace

bool template_writes_tool_calls(std::string_view chat_template) {
  return chat_template.find(kOpen) != std::string_view::npos && chat_template.find("tools") != std::string_view::npos;
}

ToolReply split_tool_calls(const std::string& text, const json& tools) {
  ToolReply r;
  if (text.find(kOpen) == std::string::npos) {
    const json call = json::parse(text, nullptr, false);
    const bool known = call.is_object() && call.contains("name") && call["name"].is_string() && call.contains("arguments") &&
                       tools.is_array() && std::any_of(tools.begin(), tools.end(), [&](const json& t) {
                         return t.is_object() && t.contains("function") && t["function"].is_object() &&
                                t["function"].value("name", json()) == call["name"];
                       });
    if (!known) return {trim(text), {}};
    const json& args = call["arguments"];
    r.calls.push_back({call_id(), call["name"].get<std::string>(),
                       args.is_string() ? args.get<std::string>() : args.dump(-1, ' ', false, json::error_handler_t::replace)});
    return r;
  }
  std::string content;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t open = text.find(kOpen, pos);
    if (open == std::string::npos) break;
    const size_t body = open + kOpen.size();
    size_t close = text.find(kClose, body);
    const size_t end = close == std::string::npos ? text.size() : close + kClose.size();
    if (close == std::string::npos) close = text.size();  // the reply ended inside the block
    const json call = json::parse(text.substr(body, close - body), nullptr, false);
    if (call.is_object() && call.contains("name") && call["name"].is_string()) {
      const json args = call.contains("arguments") ? call["arguments"] : json::object();
      r.calls.push_back({call_id(), call["name"].get<std::string>(),
                         args.is_string() ? args.get<std::string>() : args.dump(-1, ' ', false, json::error_handler_t::replace)});
      content += text.substr(pos, open - pos);
    } else {
      content += text.substr(pos, end - pos);  // not a call: the text stays
    }
    pos = end;
  }
  content += text.substr(std::min(pos, text.size()));
  r.content = trim(content);
  return r;
}

std::string ToolCallStream::push(std::string_view text) {
  held_ += text;
  if (in_call_) return {};
  if (!started_) {  // a reply that opens with '{' may be a bare call: held whole
    const size_t first = held_.find_first_not_of(" \t\r\n");
    if (first == std::string::npos) return {};
    started_ = true;
    if (held_[first] == '{') {
      in_call_ = true;
      return {};
    }
  }
  const size_t open = held_.find(kOpen);
  if (open != std::string::npos) {
    in_call_ = true;
    std::string out = held_.substr(0, open);
    held_.erase(0, open);
    return out;
  }
  // Keep back a tail that could be the start of "<tool_call>".
  size_t keep = 0;
  for (size_t n = std::min(held_.size(), kOpen.size() - 1); n > 0; --n)
    if (held_.compare(held_.size() - n, n, kOpen.substr(0, n)) == 0) {
      keep = n;
      break;
    }
  std::string out = held_.substr(0, held_.size() - keep);
  held_.erase(0, held_.size() - keep);
  return out;
}

std::string forced_tool_call_grammar(const json& tools, const std::string& name) {
  if (!tools.is_array() || tools.empty()) throw Error("tool_choice: a call was asked for, but 'tools' is empty");
  json calls = json::array();
  for (const json& t : tools) {
    if (!t.is_object() || !t.contains("function") || !t["function"].is_object() || !t["function"].contains("name") ||
        !t["function"]["name"].is_string())
      throw Error("tools: each tool must be {\"type\": \"function\", \"function\": {\"name\": ..., \"parameters\": ...}}");
    const json& f = t["function"];
    if (!name.empty() && f["name"] != name) continue;
    const json params = f.contains("parameters") && !f["parameters"].is_null() ? f["parameters"] : json{{"type", "object"}};
    calls.push_back({{"type", "object"},
                     {"properties", {{"name", {{"const", f["name"]}}}, {"arguments", params}}},
                     {"required", {"name", "arguments"}}});
  }
  if (calls.empty()) throw Error("tool_choice: no tool named '" + name + "' in 'tools'");
  std::string g = json_schema_to_gbnf(json{{"anyOf", calls}});
  // The schema's grammar starts "root ::= ..."; it becomes the block's body.
  if (g.rfind("root ::=", 0) != 0) throw Error("tool_choice: unexpected grammar for the tools");
  return "root ::= \"<tool_call>\\n\" tool-call \"\\n</tool_call>\"\ntool-call" + g.substr(4);
}

void arguments_as_objects(json& messages) {
  for (json& m : messages) {
    if (!m.is_object() || !m.contains("tool_calls") || !m["tool_calls"].is_array()) continue;
    for (json& c : m["tool_calls"]) {
      if (!c.is_object() || !c.contains("function") || !c["function"].is_object()) continue;
      json& f = c["function"];
      if (f.contains("arguments") && f["arguments"].is_string()) {
        json parsed = json::parse(f["arguments"].get<std::string>(), nullptr, false);
        if (!parsed.is_discarded()) f["arguments"] = std::move(parsed);
      }
    }
  }
}

}  // namespace minnow::server
