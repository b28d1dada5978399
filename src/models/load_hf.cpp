// Loads a Hugging Face checkpoint directory: config.json for hyper-parameters,
// safetensors (one file or shards) for weights, tokenizer.json (+ tokenizer_config.json)
// and the chat template (chat_template.jinja or tokenizer_config.json).
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "base/error.hpp"
#include "formats/safetensors.hpp"
#include "models/bind_layers.hpp"
#include "models/loaders.hpp"

namespace minnow {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

[[noreturn]] void fail(const std::string& msg) { throw Error("model: " + msg); }

json read_json(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) fail("cannot open '" + p.string() + "'");
  try {
    return json::parse(in);
  } catch (const json::exception& e) {
    fail("'" + p.string() + "' is not valid JSON: " + e.what());
  }
}

// Reads config.json fields, collecting every problem so they are reported together.
class ConfigReader {
 public:
  explicit ConfigReader(const json& j) : j_(j) {}

  int integer(const char* key, int lo, int hi, std::optional<int> fallback = std::nullopt) {
    const json* v = find(key);
    if (!v) {
      if (!fallback) problems_.push_back(std::string("missing '") + key + "'");
      return fallback.value_or(0);
    }
    if (!v->is_number_integer() || v->get<int64_t>() < lo || v->get<int64_t>() > hi) {
      problems_.push_back(std::string("'") + key + "' = " + v->dump() + " is not an integer in [" + std::to_string(lo) +
                          ", " + std::to_string(hi) + "]");
      return fallback.value_or(0);
    }
    return v->get<int>();
  }
  float number(const char* key, std::optional<float> fallback = std::nullopt, const json* in = nullptr) {
    const json* v = find(key, in);
    if (!v || v->is_null()) {
      if (!fallback) problems_.push_back(std::string("missing '") + key + "'");
      return fallback.value_or(0.0f);
    }
    if (!v->is_number()) {
      problems_.push_back(std::string("'") + key + "' = " + v->dump() + " is not a number");
      return fallback.value_or(0.0f);
    }
    return v->get<float>();
  }
  std::string string(const char* key, const std::string& fallback) {
    const json* v = find(key);
    if (!v || v->is_null()) return fallback;
    if (!v->is_string()) {
      problems_.push_back(std::string("'") + key + "' is not a string");
      return fallback;
    }
    return v->get<std::string>();
  }
  std::optional<bool> boolean(const char* key) {
    const json* v = find(key);
    if (!v || v->is_null()) return std::nullopt;
    if (!v->is_boolean()) {
      problems_.push_back(std::string("'") + key + "' is not true/false");
      return std::nullopt;
    }
    return v->get<bool>();
  }
  const json* find(const char* key, const json* in = nullptr) const {
    const json& obj = in ? *in : j_;
    if (!obj.is_object()) return nullptr;
    auto it = obj.find(key);
    return it == obj.end() ? nullptr : &*it;
  }
  void problem(std::string p) { problems_.push_back(std::move(p)); }
  void throw_if_problems(const std::string& path) const {
    if (problems_.empty()) return;
    std::string msg;
    for (const auto& p : problems_) msg += (msg.empty() ? "" : "; ") + p;
    fail("'" + path + "': " + msg);
  }

 private:
  const json& j_;
  std::vector<std::string> problems_;
};

// rope_scaling / rope_parameters: {"rope_type" or "type": ..., "factor": ...}.
RopeScaling read_scaling(ConfigReader& r, const json* s) {
  RopeScaling out;
  if (!s || s->is_null()) return out;
  if (!s->is_object()) {
    r.problem("RoPE scaling is not an object");
    return out;
  }
  std::string type = s->value("rope_type", s->value("type", std::string("default")));
  if (type == "default") return out;
  if (type == "linear") {
    out.type = RopeScaling::Type::Linear;
  } else if (type == "llama3") {
    out.type = RopeScaling::Type::Llama3;
    out.low_freq_factor = r.number("low_freq_factor", 1.0f, s);
    out.high_freq_factor = r.number("high_freq_factor", 4.0f, s);
    out.original_ctx = static_cast<int>(r.number("original_max_position_embeddings", 8192.0f, s));
    if (!(out.high_freq_factor > out.low_freq_factor)) r.problem("llama3 RoPE scaling needs high_freq_factor > low_freq_factor");
  } else {
    r.problem("RoPE scaling '" + type + "' is not supported yet (supported: default, linear, llama3)");
    return out;
  }
  out.factor = r.number("factor", std::nullopt, s);
  if (!(out.factor > 0)) r.problem("RoPE scaling factor must be positive");
  return out;
}

// RoPE base and scaling, from the older top-level fields (rope_theta, rope_scaling,
// rope_local_base_freq) or transformers 5's rope_parameters (per layer type for Gemma 3).
void read_rope(ConfigReader& r, ModelConfig& c) {
  c.rope_style = RopeStyle::HalfSplit;
  const json* params = r.find("rope_parameters");
  if (params && params->is_object()) {
    const json* global = params->contains("full_attention") ? &params->at("full_attention") : params;
    const json* local = params->contains("sliding_attention") ? &params->at("sliding_attention") : nullptr;
    c.rope_base = r.number("rope_theta", 10000.0f, global);
    c.rope_scaling = read_scaling(r, global);
    c.rope_base_local = local ? r.number("rope_theta", 10000.0f, local) : c.rope_base;
    if (local && read_scaling(r, local).type != RopeScaling::Type::None)
      r.problem("RoPE scaling on sliding-window layers is not supported yet");
    return;
  }
  c.rope_base = r.number("rope_theta", 10000.0f);
  c.rope_scaling = read_scaling(r, r.find("rope_scaling"));
  c.rope_base_local = r.number("rope_local_base_freq", c.rope_base);
}

void read_attention_pattern(ConfigReader& r, ModelConfig& c) {
  const json* window = r.find("sliding_window");
  if (r.boolean("use_sliding_window") == false) window = nullptr;  // Qwen2 declares a window it does not use
  if (!window || window->is_null()) return;
  c.sliding_window = r.integer("sliding_window", 1, 1 << 24, 0);
  if (const json* types = r.find("layer_types"); types && types->is_array()) {
    if (types->size() != static_cast<size_t>(c.n_layers))
      r.problem("'layer_types' has " + std::to_string(types->size()) + " entries for " + std::to_string(c.n_layers) + " layers");
    for (const auto& t : *types) {
      std::string s = t.is_string() ? t.get<std::string>() : "";
      if (s != "sliding_attention" && s != "full_attention") r.problem("'layer_types' holds '" + t.dump() + "'");
      c.layer_sliding.push_back(s == "sliding_attention");
    }
  } else if (r.find("sliding_window_pattern")) {
    const int every = r.integer("sliding_window_pattern", 1, 1 << 16, 1);
    for (int i = 0; i < c.n_layers; ++i) c.layer_sliding.push_back((i + 1) % every != 0);
  } else {
    r.problem("'sliding_window' is set but neither 'layer_types' nor 'sliding_window_pattern' says which layers use it");
  }
}

ModelConfig read_config(const json& j, const FamilySpec& spec, const std::string& path) {
  ConfigReader r(j);
  ModelConfig c;
  c.arch = std::string(spec.name);
  c.n_layers = r.integer("num_hidden_layers", 1, 1024);
  c.d_model = r.integer("hidden_size", 1, 1 << 16);
  c.n_heads = r.integer("num_attention_heads", 1, 1024);
  c.n_kv_heads = r.integer("num_key_value_heads", 1, 1024, c.n_heads);
  c.d_ff = r.integer("intermediate_size", 1, 1 << 18);
  c.vocab_size = r.integer("vocab_size", 1, 1 << 24);
  c.ctx_train = r.integer("max_position_embeddings", 1, 1 << 24);
  c.rms_eps = r.number("rms_norm_eps");
  if (c.n_heads > 0 && c.n_kv_heads > 0 && c.n_heads % c.n_kv_heads != 0)
    r.problem("'num_attention_heads' (" + std::to_string(c.n_heads) + ") is not a multiple of 'num_key_value_heads' (" +
              std::to_string(c.n_kv_heads) + ")");
  const bool explicit_head_dim = r.find("head_dim") && !r.find("head_dim")->is_null();
  if (!explicit_head_dim && c.n_heads > 0 && c.d_model % c.n_heads != 0)
    r.problem("'hidden_size' (" + std::to_string(c.d_model) + ") is not a multiple of 'num_attention_heads' (" +
              std::to_string(c.n_heads) + ") and there is no 'head_dim'");
  c.head_dim = explicit_head_dim ? r.integer("head_dim", 2, 4096) : (c.n_heads > 0 ? c.d_model / c.n_heads : 0);
  read_rope(r, c);
  read_attention_pattern(r, c);

  const std::string act = r.string("hidden_activation", r.string("hidden_act", "silu"));
  if (act == "silu") c.activation = Activation::SiLU;
  else if (act == "gelu_pytorch_tanh") c.activation = Activation::GeluTanh;
  else r.problem("activation '" + act + "' is not supported (supported: silu, gelu_pytorch_tanh)");
  if (c.activation != spec.activation) r.problem("activation '" + act + "' is not the one " + c.arch + " models use");
  c.qkv_bias = spec.qkv_bias || r.boolean("attention_bias").value_or(false);
  c.o_bias = !spec.qkv_bias && r.boolean("attention_bias").value_or(false);
  if (r.boolean("mlp_bias").value_or(false)) r.problem("'mlp_bias' = true is not supported yet");
  c.qk_norm = spec.qk_norm;
  c.sandwich_norm = spec.sandwich_norm;
  if (spec.scale_embeddings) c.embed_scale = std::sqrt(static_cast<float>(c.d_model));
  if (r.find("query_pre_attn_scalar")) c.attn_scale = 1.0f / std::sqrt(r.number("query_pre_attn_scalar"));
  c.attn_softcap = r.number("attn_logit_softcapping", 0.0f);
  c.final_softcap = r.number("final_logit_softcapping", 0.0f);
  if (c.attn_softcap < 0 || c.final_softcap < 0) r.problem("logit soft-capping must not be negative");
  r.throw_if_problems(path);
  validate_config(c);
  return c;
}

TensorRef to_ref(const SafetensorsTensor& t) {
  TensorRef r;
  r.name = t.name;
  r.type_name = t.dtype;
  r.type = t.type;
  r.dims.assign(t.shape.rbegin(), t.shape.rend());  // row-major -> fastest first
  r.n_elements = t.n_elements;
  r.n_bytes = t.n_bytes;
  r.data = t.data;
  return r;
}

void bind(const FamilySpec& spec, std::optional<bool> tie, LoadedModel& m) {
  ModelConfig& c = m.config;
  const TensorTable t(m.tensors);
  const float off = spec.hf_norm_offset;
  const int64_t d = c.d_model;
  m.token_embd = t.matrix("model.embed_tokens.weight", d, c.vocab_size);
  const TensorRef* head = t.find("lm_head.weight");
  c.tied_output = tie.value_or(head == nullptr);
  if (!c.tied_output && !head) fail("config.json says the output head is not tied, but there is no 'lm_head.weight'");
  m.output = c.tied_output ? m.token_embd : TensorTable::matrix(*head, d, c.vocab_size);
  m.output_norm = t.vector("model.norm.weight", d, off);
  // transformers' names; the per-layer norms some families name differently come from the spec.
  const LayerNames names{.prefix = "model.layers.",
                         .attn_norm = "input_layernorm",
                         .ffn_norm = std::string(spec.hf_ffn_norm),
                         .post_attn_norm = std::string(spec.hf_post_attn_norm),
                         .post_ffn_norm = std::string(spec.hf_post_ffn_norm),
                         .wq = "self_attn.q_proj",
                         .wk = "self_attn.k_proj",
                         .wv = "self_attn.v_proj",
                         .wo = "self_attn.o_proj",
                         .gate = "mlp.gate_proj",
                         .up = "mlp.up_proj",
                         .down = "mlp.down_proj",
                         .q_norm = "self_attn.q_norm",
                         .k_norm = "self_attn.k_norm"};
  bind_layers(t, names, spec.hf_norm_offset, m);
}

// chat_template.jinja (transformers 5) or tokenizer_config.json's "chat_template": a
// string, or a list of {"name", "template"} of which "default" is taken.
std::string read_chat_template(const fs::path& dir, const json& tok_config) {
  std::error_code ec;
  if (fs::exists(dir / "chat_template.jinja", ec)) {
    std::ifstream in(dir / "chat_template.jinja", std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  const json t = tok_config.is_object() ? tok_config.value("chat_template", json()) : json();
  if (t.is_string()) return t.get<std::string>();
  if (t.is_array())
    for (const auto& e : t)
      if (e.is_object() && e.value("name", std::string()) == "default" && e.contains("template") && e.at("template").is_string())
        return e.at("template").get<std::string>();
  return {};
}

}  // namespace

std::unique_ptr<LoadedModel> load_hf_checkpoint(const std::string& dir_path) {
  const fs::path dir(dir_path);
  std::error_code ec;
  if (!fs::exists(dir / "config.json", ec)) fail("directory '" + dir_path + "' has no config.json (not a Hugging Face checkpoint)");
  const json config = read_json(dir / "config.json");
  if (!config.is_object()) fail("'config.json' is not a JSON object");
  const std::string type = config.value("model_type", json()).is_string() ? config.at("model_type").get<std::string>() : "";
  if (type.empty()) fail("'config.json' has no 'model_type'");
  const FamilySpec* spec = family_by_hf_model_type(type);
  if (!spec) fail("model_type '" + type + "' is not supported yet (supported: " + supported_families() + ")");

  auto m = std::make_unique<LoadedModel>();
  m->format = "safetensors";
  m->config = read_config(config, *spec, (dir / "config.json").string());
  m->config.name = dir.filename().empty() ? dir.parent_path().filename().string() : dir.filename().string();
  std::shared_ptr<SafetensorsCheckpoint> ckpt = SafetensorsCheckpoint::open(dir_path);
  m->storage = ckpt;
  for (const SafetensorsTensor* t : ckpt->tensors()) m->tensors.push_back(to_ref(*t));
  std::optional<bool> tie;
  if (const auto it = config.find("tie_word_embeddings"); it != config.end() && it->is_boolean()) tie = it->get<bool>();
  bind(*spec, tie, *m);

  if (!fs::exists(dir / "tokenizer.json", ec)) fail("directory '" + dir_path + "' has no tokenizer.json");
  m->tokenizer = tokenizer_from_hf_json((dir / "tokenizer.json").string());
  if (m->tokenizer->vocab_size() > m->config.vocab_size)
    fail("tokenizer has " + std::to_string(m->tokenizer->vocab_size()) + " tokens but config.json 'vocab_size' is " +
         std::to_string(m->config.vocab_size));
  json tok_config;
  if (fs::exists(dir / "tokenizer_config.json", ec)) tok_config = read_json(dir / "tokenizer_config.json");
  m->chat_template = read_chat_template(dir, tok_config);
  if (m->chat_template.empty()) m->chat_template = std::string(spec->default_chat_template);
  return m;
}

}  // namespace minnow
