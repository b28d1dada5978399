#include "server/openai_api.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <random>

#include "base/error.hpp"
#include "grammar/gbnf.hpp"
#include "grammar/json_schema.hpp"
#include "models/model.hpp"

namespace minnow::server {

using json = nlohmann::ordered_json;

namespace {

const char* finish_reason(Finish f) { return f == Finish::Length ? "length" : "stop"; }

// Type checks that name the field, as a client needs to fix its request.
class Fields {
 public:
  explicit Fields(const json& body) : j_(body) {}

  const json* get(const char* name) const {
    auto it = j_.find(name);
    return it == j_.end() || it->is_null() ? nullptr : &*it;
  }
  double number(const char* name, double fallback, double lo, double hi) const {
    const json* v = get(name);
    if (!v) return fallback;
    if (!v->is_number()) throw invalid_request(name, "invalid_value", std::string("'") + name + "' must be a number");
    const double x = v->get<double>();
    if (!(x >= lo && x <= hi))
      throw invalid_request(name, "invalid_value",
                            std::string("'") + name + "' must be between " + fmt(lo) + " and " + fmt(hi) + " (got " + fmt(x) + ")");
    return x;
  }
  int64_t integer(const char* name, int64_t fallback, int64_t lo, int64_t hi) const {
    const json* v = get(name);
    if (!v) return fallback;
    if (!v->is_number_integer()) throw invalid_request(name, "invalid_value", std::string("'") + name + "' must be an integer");
    if (v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(hi))
      throw invalid_request(name, "invalid_value", std::string("'") + name + "' is too large");
    const int64_t x = v->get<int64_t>();
    if (x < lo || x > hi)
      throw invalid_request(name, "invalid_value",
                            std::string("'") + name + "' must be between " + std::to_string(lo) + " and " + std::to_string(hi) +
                                " (got " + std::to_string(x) + ")");
    return x;
  }
  bool boolean(const char* name, bool fallback) const {
    const json* v = get(name);
    if (!v) return fallback;
    if (!v->is_boolean()) throw invalid_request(name, "invalid_value", std::string("'") + name + "' must be true or false");
    return v->get<bool>();
  }

 private:
  static std::string fmt(double x) {
    std::string s = std::to_string(x);
    s.erase(s.find_last_not_of('0') + 1);
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
  }
  const json& j_;
};

SamplingOptions parse_sampling(const Fields& f) {
  SamplingOptions s;
  s.temperature = static_cast<float>(f.number("temperature", 1.0, 0.0, 2.0));
  s.top_p = static_cast<float>(f.number("top_p", 1.0, 0.0, 1.0));
  s.top_k = static_cast<int>(f.integer("top_k", 0, 0, 1 << 30));
  s.min_p = static_cast<float>(f.number("min_p", 0.0, 0.0, 1.0));
  s.presence_penalty = static_cast<float>(f.number("presence_penalty", 0.0, -2.0, 2.0));
  s.frequency_penalty = static_cast<float>(f.number("frequency_penalty", 0.0, -2.0, 2.0));
  s.repeat_penalty = static_cast<float>(f.number("repeat_penalty", 1.0, 0.0, 10.0));
  if (const json* seed = f.get("seed")) {
    if (!seed->is_number_integer()) throw invalid_request("seed", "invalid_value", "'seed' must be an integer");
    s.seed = seed->is_number_unsigned() ? seed->get<uint64_t>() : static_cast<uint64_t>(seed->get<int64_t>());
  } else {
    s.seed = std::random_device{}();
  }
  return s;
}

std::vector<std::string> parse_stop(const Fields& f) {
  const json* v = f.get("stop");
  if (!v) return {};
  if (v->is_string()) return {v->get<std::string>()};
  if (!v->is_array() || v->size() > 4) throw invalid_request("stop", "invalid_value", "'stop' must be a string or a list of up to 4 strings");
  std::vector<std::string> out;
  for (const auto& s : *v) {
    if (!s.is_string()) throw invalid_request("stop", "invalid_value", "'stop' must be a string or a list of up to 4 strings");
    out.push_back(s.get<std::string>());
  }
  return out;
}

// Chat messages as the template expects them: content parts joined into one string,
// "developer" treated as "system".
json normalize_messages(const json* v) {
  if (!v) throw invalid_request("messages", "missing_field", "'messages' is required");
  if (!v->is_array() || v->empty()) throw invalid_request("messages", "invalid_value", "'messages' must be a non-empty list of messages");
  json out = json::array();
  for (size_t i = 0; i < v->size(); ++i) {
    const json& m = (*v)[i];
    const std::string where = "messages[" + std::to_string(i) + "]";
    if (!m.is_object()) throw invalid_request(where, "invalid_value", "'" + where + "' must be an object");
    auto role = m.find("role");
    if (role == m.end() || !role->is_string())
      throw invalid_request(where + ".role", "invalid_value", "'" + where + ".role' must be a string");
    const std::string r = role->get<std::string>();
    if (r != "system" && r != "user" && r != "assistant" && r != "tool" && r != "developer")
      throw invalid_request(where + ".role", "invalid_value",
                            "'" + where + ".role' must be system, developer, user, assistant or tool (got '" + r + "')");
    json msg = m;
    if (r == "developer") msg["role"] = "system";
    auto content = m.find("content");
    if (content != m.end() && content->is_array()) {
      std::string text;
      for (const auto& part : *content) {
        if (!part.is_object() || part.value("type", "") != "text" || !part.contains("text") || !part["text"].is_string())
          throw invalid_request(where + ".content", "invalid_value",
                                "'" + where + ".content' parts must be {\"type\": \"text\", \"text\": ...} (only text is supported)");
        text += part["text"].get<std::string>();
      }
      msg["content"] = text;
    } else if (content != m.end() && !content->is_string() && !content->is_null()) {
      throw invalid_request(where + ".content", "invalid_value", "'" + where + ".content' must be a string, a list of parts or null");
    } else if (content == m.end() && r != "assistant") {
      throw invalid_request(where + ".content", "missing_field", "'" + where + ".content' is required");
    }
    out.push_back(std::move(msg));
  }
  return out;
}

// tools and tool_choice: with "none" the template does not see the tools; "auto" (the
// default) lets the model call them; "required" or {"type": "function", "function":
// {"name": N}} forces one call, its arguments held to the function's parameters schema by a
// grammar. Calls are parsed out of the reply where the template asks for <tool_call> blocks.
struct ToolUse {
  const json* tools = nullptr;
  bool parse = false;
  std::string forced_grammar;
};

ToolUse parse_tool_use(const Fields& f, const Model& model) {
  ToolUse u;
  const json* tools = f.get("tools");
  if (tools && !tools->is_array()) throw invalid_request("tools", "invalid_value", "'tools' must be a list");
  const json* choice = f.get("tool_choice");
  std::string forced;
  bool force = false;
  if (choice) {
    if (choice->is_string() && *choice == "none") return u;
    if (choice->is_string() && *choice == "required") {
      force = true;
    } else if (choice->is_object() && choice->contains("function") && (*choice)["function"].is_object() &&
               (*choice)["function"].contains("name") && (*choice)["function"]["name"].is_string()) {
      force = true;
      forced = (*choice)["function"]["name"];
    } else if (!(choice->is_string() && *choice == "auto")) {
      throw invalid_request("tool_choice", "invalid_value",
                            "'tool_choice' must be 'none', 'auto', 'required' or {\"type\": \"function\", \"function\": {\"name\": ...}}");
    }
  }
  if (!tools || tools->empty()) {
    if (force) throw invalid_request("tool_choice", "invalid_value", "'tool_choice' asks for a call, but there are no 'tools'");
    return u;
  }
  u.tools = tools;
  u.parse = template_writes_tool_calls(model.impl().chat_template);
  if (force) {
    if (!u.parse)
      throw invalid_request("tool_choice", "invalid_value",
                            "this model's chat template does not write <tool_call> blocks, so a call cannot be forced");
    try {
      u.forced_grammar = forced_tool_call_grammar(*tools, forced);
    } catch (const Error& e) {
      throw invalid_request("tool_choice", "invalid_value", e.what());
    }
  }
  return u;
}

std::string render_chat(const Fields& f, const Model& model, const ToolUse& tools) {
  json vars = json::object();
  vars["messages"] = normalize_messages(f.get("messages"));
  arguments_as_objects(vars["messages"]);
  if (tools.tools) vars["tools"] = *tools.tools;
  vars["add_generation_prompt"] = true;
  if (const json* kw = f.get("chat_template_kwargs")) {
    if (!kw->is_object()) throw invalid_request("chat_template_kwargs", "invalid_value", "'chat_template_kwargs' must be an object");
    for (auto it = kw->begin(); it != kw->end(); ++it) vars[it.key()] = it.value();
  }
  if (!model.has_chat_template())
    throw invalid_request("messages", "invalid_value", "this model has no chat template; use /v1/completions with a prompt");
  try {
    return model.apply_chat_template_json(vars.dump());
  } catch (const Error& e) {  // e.g. raise_exception("Conversation roles must alternate ...")
    throw invalid_request("messages", "invalid_value", e.what());
  }
}

std::vector<int32_t> completion_prompt(const Fields& f, const Model& model) {
  const json* p = f.get("prompt");
  if (!p) throw invalid_request("prompt", "missing_field", "'prompt' is required");
  if (p->is_string()) return model.tokenize(p->get<std::string>());
  // One prompt only: a one-element list, or token ids.
  if (p->is_array() && p->size() == 1 && (*p)[0].is_string()) return model.tokenize((*p)[0].get<std::string>());
  if (p->is_array() && !p->empty() && std::all_of(p->begin(), p->end(), [](const json& x) { return x.is_number_integer(); })) {
    std::vector<int32_t> ids;
    for (const auto& x : *p) {
      const int64_t id = x.get<int64_t>();
      if (id < 0 || id >= model.info().vocab_size)
        throw invalid_request("prompt", "invalid_value", "token id " + std::to_string(id) + " is outside the vocabulary");
      ids.push_back(static_cast<int32_t>(id));
    }
    return ids;
  }
  throw invalid_request("prompt", "invalid_value", "'prompt' must be a string (one prompt per request) or a list of token ids");
}

}  // namespace

ApiError invalid_request(const std::string& param, const std::string& code, const std::string& message) {
  return ApiError(400, "invalid_request_error", code, param, message);
}

std::string error_body(const ApiError& e) {
  json err = {{"message", e.what()}, {"type", e.type}, {"param", nullptr}, {"code", nullptr}};
  if (!e.param.empty()) err["param"] = e.param;
  if (!e.code.empty()) err["code"] = e.code;
  return json{{"error", err}}.dump(-1, ' ', false, json::error_handler_t::replace);
}

// Structured output: OpenAI's response_format (text, json_object, json_schema) or
// llama-server's `grammar` (GBNF text). Null when the output is free.
std::shared_ptr<const grammar::Grammar> parse_output_grammar(const Fields& f) {
  std::string gbnf;
  const char* param = "response_format";
  try {
    if (const json* rf = f.get("response_format")) {
      if (!rf->is_object() || !rf->contains("type") || !(*rf)["type"].is_string())
        throw invalid_request(param, "invalid_value", "'response_format' must be an object with a string 'type'");
      const std::string type = (*rf)["type"];
      if (type == "json_object") {
        gbnf = rf->contains("schema") ? json_schema_to_gbnf((*rf)["schema"]) : json_object_gbnf();
      } else if (type == "json_schema") {
        const auto js = rf->find("json_schema");
        if (js == rf->end() || !js->is_object())
          throw invalid_request(param, "invalid_value", "'response_format.json_schema' must be an object with a 'schema'");
        const auto schema = js->find("schema");
        gbnf = schema == js->end() || schema->is_null() ? json_object_gbnf() : json_schema_to_gbnf(*schema);
      } else if (type != "text") {
        throw invalid_request(param, "invalid_value",
                              "'response_format.type' must be 'text', 'json_object' or 'json_schema' (got '" + type + "')");
      }
    }
    if (const json* g = f.get("grammar")) {
      param = "grammar";
      if (!g->is_string()) throw invalid_request(param, "invalid_value", "'grammar' must be a string (GBNF)");
      if (!gbnf.empty()) throw invalid_request(param, "invalid_value", "give 'grammar' or 'response_format', not both");
      gbnf = g->get<std::string>();
    }
    if (gbnf.empty()) return nullptr;
    return std::make_shared<const grammar::Grammar>(grammar::parse_gbnf(gbnf));
  } catch (const Error& e) {
    throw invalid_request(param, "invalid_value", e.what());
  }
}

ParsedRequest parse_request(Endpoint e, std::string_view body, const Model& model, const std::string& model_id, int ctx) {
  const json j = json::parse(body, nullptr, false);
  if (j.is_discarded()) throw invalid_request("", "invalid_json", "the request body is not valid JSON");
  if (!j.is_object()) throw invalid_request("", "invalid_json", "the request body must be a JSON object");
  const Fields f(j);
  if (const json* m = f.get("model")) {
    if (!m->is_string()) throw invalid_request("model", "invalid_value", "'model' must be a string");
    if (m->get<std::string>() != model_id)
      throw ApiError(404, "invalid_request_error", "model_not_found", "model",
                     "the model '" + m->get<std::string>() + "' does not exist; this server runs '" + model_id + "'");
  }
  if (f.integer("n", 1, 1, 1) != 1) throw invalid_request("n", "invalid_value", "'n' must be 1");
  ParsedRequest r;
  r.stream = f.boolean("stream", false);
  if (const json* so = f.get("stream_options")) {
    if (!so->is_object()) throw invalid_request("stream_options", "invalid_value", "'stream_options' must be an object");
    r.include_usage = Fields(*so).boolean("include_usage", false);
  }
  CompletionRequest& c = r.completion;
  c.sampling = parse_sampling(f);
  c.stop = parse_stop(f);
  c.ignore_eos = f.boolean("ignore_eos", false);
  // minnow's extension: speculative decoding by prompt lookup (same output; 0: none at all); absent: the
  // server's --draft model or --lookup-draft.
  c.lookup_draft = static_cast<int>(f.integer("lookup_draft", -1, 0, kMaxLookupDraft));
  c.grammar = parse_output_grammar(f);
  const ToolUse tools = e == Endpoint::Chat ? parse_tool_use(f, model) : ToolUse{};
  r.tool_calls = tools.parse;
  if (tools.parse) r.tools = *tools.tools;
  if (!tools.forced_grammar.empty()) {
    if (c.grammar) throw invalid_request("tool_choice", "invalid_value", "a forced tool call and 'response_format' or 'grammar' exclude each other");
    c.grammar = std::make_shared<const grammar::Grammar>(grammar::parse_gbnf(tools.forced_grammar));
  }
  const char* max_name = f.get("max_completion_tokens") ? "max_completion_tokens" : "max_tokens";
  c.max_tokens = static_cast<int>(f.integer(max_name, ctx, 1, 1 << 30));
  const char* prompt_param = e == Endpoint::Chat ? "messages" : "prompt";
  c.prompt = e == Endpoint::Chat ? model.tokenize(render_chat(f, model, tools)) : completion_prompt(f, model);
  if (c.prompt.empty()) throw invalid_request(prompt_param, "invalid_value", "the prompt is empty");
  if (static_cast<int64_t>(c.prompt.size()) >= ctx)
    throw invalid_request(prompt_param, "context_length_exceeded",
                          "this server's context is " + std::to_string(ctx) + " tokens per request, but the prompt has " +
                              std::to_string(c.prompt.size()) + " tokens (the reply needs at least one more)");
  return r;
}

ResponseFormat::ResponseFormat(Endpoint e, std::string model_id) : e_(e), model_(std::move(model_id)) {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  char hex[25];
  std::snprintf(hex, sizeof hex, "%016llx%08llx", static_cast<unsigned long long>(rng()),
                static_cast<unsigned long long>(rng() & 0xffffffffULL));
  id_ = (e == Endpoint::Chat ? "chatcmpl-" : "cmpl-") + std::string(hex);
  created_ = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

namespace {
json usage_json(int prompt_tokens, int completion_tokens) {
  return {{"prompt_tokens", prompt_tokens}, {"completion_tokens", completion_tokens}, {"total_tokens", prompt_tokens + completion_tokens}};
}
std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }
}  // namespace

namespace {
// Streamed deltas number the calls ("index"); a whole message does not.
json tool_calls_json(const std::vector<ToolCall>& calls, bool with_index) {
  json out = json::array();
  for (size_t i = 0; i < calls.size(); ++i) {
    json c = with_index ? json{{"index", i}} : json::object();
    c["id"] = calls[i].id;
    c["type"] = "function";
    c["function"] = {{"name", calls[i].name}, {"arguments", calls[i].arguments}};
    out.push_back(std::move(c));
  }
  return out;
}
}  // namespace

std::string ResponseFormat::full(const std::string& text, Finish f, int prompt_tokens, int completion_tokens,
                                 const json* tools) const {
  json choice;
  if (e_ == Endpoint::Chat) {
    json message = {{"role", "assistant"}, {"content", text}};
    const char* reason = finish_reason(f);
    if (tools) {
      ToolReply r = split_tool_calls(text, *tools);
      if (!r.calls.empty()) {
        message["content"] = r.content.empty() ? json(nullptr) : json(r.content);
        message["tool_calls"] = tool_calls_json(r.calls, false);
        reason = "tool_calls";
      }
    }
    choice = {{"index", 0}, {"message", message}, {"logprobs", nullptr}, {"finish_reason", reason}};
  } else
    choice = {{"index", 0}, {"text", text}, {"logprobs", nullptr}, {"finish_reason", finish_reason(f)}};
  return dump({{"id", id_},
               {"object", e_ == Endpoint::Chat ? "chat.completion" : "text_completion"},
               {"created", created_},
               {"model", model_},
               {"choices", json::array({choice})},
               {"usage", usage_json(prompt_tokens, completion_tokens)}});
}

namespace {
json chunk_base(Endpoint e, const std::string& id, int64_t created, const std::string& model) {
  return {{"id", id}, {"object", e == Endpoint::Chat ? "chat.completion.chunk" : "text_completion"}, {"created", created}, {"model", model}};
}
}  // namespace

std::string ResponseFormat::first_chunk(bool usage_null) const {
  if (e_ != Endpoint::Chat) return {};
  json c = chunk_base(e_, id_, created_, model_);
  c["choices"] = json::array({{{"index", 0}, {"delta", {{"role", "assistant"}, {"content", ""}}}, {"logprobs", nullptr}, {"finish_reason", nullptr}}});
  if (usage_null) c["usage"] = nullptr;
  return dump(c);
}

std::string ResponseFormat::text_chunk(const std::string& text, bool usage_null) const {
  json c = chunk_base(e_, id_, created_, model_);
  if (e_ == Endpoint::Chat)
    c["choices"] = json::array({{{"index", 0}, {"delta", {{"content", text}}}, {"logprobs", nullptr}, {"finish_reason", nullptr}}});
  else
    c["choices"] = json::array({{{"index", 0}, {"text", text}, {"logprobs", nullptr}, {"finish_reason", nullptr}}});
  if (usage_null) c["usage"] = nullptr;
  return dump(c);
}

std::string ResponseFormat::tool_calls_chunk(const std::vector<ToolCall>& calls, bool usage_null) const {
  json c = chunk_base(e_, id_, created_, model_);
  c["choices"] = json::array({{{"index", 0}, {"delta", {{"tool_calls", tool_calls_json(calls, true)}}}, {"logprobs", nullptr}, {"finish_reason", nullptr}}});
  if (usage_null) c["usage"] = nullptr;
  return dump(c);
}

std::string ResponseFormat::finish_chunk(Finish f, bool usage_null, bool tool_calls) const {
  json c = chunk_base(e_, id_, created_, model_);
  if (e_ == Endpoint::Chat)
    c["choices"] = json::array({{{"index", 0}, {"delta", json::object()}, {"logprobs", nullptr}, {"finish_reason", tool_calls ? "tool_calls" : finish_reason(f)}}});
  else
    c["choices"] = json::array({{{"index", 0}, {"text", ""}, {"logprobs", nullptr}, {"finish_reason", finish_reason(f)}}});
  if (usage_null) c["usage"] = nullptr;
  return dump(c);
}

std::string ResponseFormat::usage_chunk(int prompt_tokens, int completion_tokens) const {
  json c = chunk_base(e_, id_, created_, model_);
  c["choices"] = json::array();
  c["usage"] = usage_json(prompt_tokens, completion_tokens);
  return dump(c);
}

}  // namespace minnow::server
