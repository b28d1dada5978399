#include "quant/recipe.hpp"

#include <fnmatch.h>

#include <algorithm>
#include <cctype>

#include "base/error.hpp"
#include "quant/quantize.hpp"

namespace minnow::quant {
namespace {

// Layers a recipe gives more bits: all of them; the first and last eighth of the stack plus
// every third layer in between (where the error hurts most, in llama.cpp's measurements); or
// only the two eighths.
enum class Layers { All, Spread, Ends };

// `role` is a tensor's name without "blk.N." ("attn_v.weight"); "output" means the output
// head, which is token_embd.weight when the model ties them.
struct Rule {
  std::string_view role;
  Layers layers;
  DType type;
};

struct RecipeSpec {
  std::string_view name;
  DType base;
  uint32_t file_type;  // llama.cpp's llama_ftype number
  std::vector<Rule> rules;
};

const std::vector<RecipeSpec>& recipes() {
  static const std::vector<RecipeSpec> table = {
      {"Q4_K_M", DType::Q4_K, 15,
       {{"output", Layers::All, DType::Q6_K},
        {"attn_v.weight", Layers::Spread, DType::Q6_K},
        {"ffn_down.weight", Layers::Spread, DType::Q6_K}}},
      // minnow's: K and V are small in grouped-query attention (Qwen2.5-1.5B: 256 rows against
      // 1536 for Q) and their error reaches every head that shares them, so they get more bits
      // in every layer, paid for by ffn_down's middle layers. Measured in docs/quantize.md.
      {"Q4_K_KV", DType::Q4_K, 15,
       {{"output", Layers::All, DType::Q6_K},
        {"attn_k.weight", Layers::All, DType::Q5_K},
        {"attn_v.weight", Layers::All, DType::Q6_K},
        {"ffn_down.weight", Layers::Ends, DType::Q6_K}}},
      {"Q5_K_M", DType::Q5_K, 17,
       {{"output", Layers::All, DType::Q6_K},
        {"attn_v.weight", Layers::Spread, DType::Q6_K},
        {"ffn_down.weight", Layers::Spread, DType::Q6_K}}},
  };
  return table;
}

struct PlainType {
  std::string_view name;
  DType type;
  uint32_t file_type;
};
const PlainType kPlainTypes[] = {
    {"F32", DType::F32, 0},    {"F16", DType::F16, 1},    {"BF16", DType::BF16, 32}, {"Q4_0", DType::Q4_0, 2},
    {"Q4_1", DType::Q4_1, 3},  {"Q5_0", DType::Q5_0, 8},  {"Q5_1", DType::Q5_1, 9},  {"Q8_0", DType::Q8_0, 7},
    {"Q4_K", DType::Q4_K, 14}, {"Q5_K", DType::Q5_K, 16}, {"Q6_K", DType::Q6_K, 18},
};

std::string upper(std::string_view s) {
  std::string u(s);
  for (char& c : u) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return u;
}

double bits_per_weight(DType t) {
  const DTypeTraits& tr = dtype_traits(t);
  return 8.0 * static_cast<double>(tr.block_bytes) / static_cast<double>(tr.block_size);
}

bool in_layers(Layers l, int layer, int n_layers) {
  if (l == Layers::All) return true;
  if (layer < 0 || n_layers <= 0) return false;
  const int eighth = n_layers / 8;
  // llama.cpp's use_more_bits, integer division and all (7 * 28 / 8 = 24, not 28 - 28 / 8 = 25).
  const bool end = layer < eighth || layer >= 7 * n_layers / 8;
  return end || (l == Layers::Spread && (layer - eighth) % 3 == 2);
}

// "blk.12.attn_v.weight" -> (12, "attn_v.weight"); other names -> (-1, name).
std::pair<int, std::string> split_layer(const std::string& name) {
  if (name.rfind("blk.", 0) != 0) return {-1, name};
  const size_t dot = name.find('.', 4);
  if (dot == std::string::npos) return {-1, name};
  int layer = 0;
  for (size_t i = 4; i < dot; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(name[i]))) return {-1, name};
    layer = layer * 10 + (name[i] - '0');
  }
  return {layer, name.substr(dot + 1)};
}

bool is_output_head(const TensorFacts& t) {
  return t.name == "output.weight" || (t.tied_output && t.name == "token_embd.weight");
}

}  // namespace

std::optional<Target> parse_target(std::string_view name) {
  const std::string u = upper(name);
  for (const auto& r : recipes())
    if (r.name == u) return Target{u, r.base, true};
  for (const auto& p : kPlainTypes)
    if (p.name == u) return Target{u, p.type, false};
  return std::nullopt;
}

std::string target_names() {
  std::string s;
  for (const auto& p : kPlainTypes) s += (s.empty() ? "" : ", ") + std::string(p.name);
  for (const auto& r : recipes()) s += ", " + std::string(r.name);
  return s;
}

uint32_t file_type_of(const Target& t) {
  for (const auto& r : recipes())
    if (r.name == t.name) return r.file_type;
  for (const auto& p : kPlainTypes)
    if (p.type == t.base) return p.file_type;
  return 0;
}

bool Override::matches(const std::string& name) const {
  if (regex) return std::regex_search(name, *regex);
  return fnmatch(glob.c_str(), name.c_str(), 0) == 0;
}

Override parse_override(const std::string& spec) {
  const size_t eq = spec.rfind('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
    throw Error("--override '" + spec + "': expected PATTERN=TYPE, e.g. 'blk.*.attn_v.weight=Q8_0'");
  Override o;
  o.text = spec;
  const std::string pattern = spec.substr(0, eq);
  const auto target = parse_target(spec.substr(eq + 1));
  if (!target || target->mixed)
    throw Error("--override '" + spec + "': unknown type '" + spec.substr(eq + 1) + "' (types: F32, F16, BF16, Q4_0, " +
                "Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K, Q6_K)");
  o.type = target->base;
  if (pattern.size() >= 2 && pattern.front() == '/' && pattern.back() == '/') {
    try {
      o.regex.emplace(pattern.substr(1, pattern.size() - 2), std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      throw Error("--override '" + spec + "': bad regular expression: " + e.what());
    }
  } else {
    o.glob = pattern;
  }
  return o;
}

DType fallback_type(DType wanted, int64_t row) {
  if (row % dtype_traits(wanted).block_size == 0) return wanted;
  DType next = DType::F16;
  switch (wanted) {
    case DType::Q4_K: next = DType::Q5_0; break;  // about the bits of Q4_K once its scales are counted
    case DType::Q5_K: next = DType::Q5_1; break;
    case DType::Q6_K: next = DType::Q8_0; break;
    default: break;
  }
  return row % dtype_traits(next).block_size == 0 ? next : DType::F16;
}

Choice Plan::choose(const TensorFacts& t) const {
  Choice c{target.base, "", ""};
  const bool matrix = t.dims.size() >= 2;
  const Override* over = nullptr;
  for (const auto& o : overrides)
    if (o.matches(t.name)) over = &o;  // the last one given wins
  const bool block_type = dtype_traits(over ? over->type : DType::F32).block_size > 1;
  if (over && (matrix || !block_type)) {
    c = {over->type, "--override " + over->text, ""};
  } else if (!matrix) {
    // Norms, biases and other vectors: tiny, and read as f32 anyway (llama.cpp cannot add
    // a block-quantized bias). A pattern that also names them quantizes only the matrices.
    c = {DType::F32, over ? "a vector: --override " + over->text + " applies to matrices" : "", ""};
  } else if (!pure) {
    const auto [layer, role] = split_layer(t.name);
    if (target.mixed) {
      for (const auto& r : recipes())
        if (r.name == target.name)
          for (const Rule& rule : r.rules) {
            const bool hit = rule.role == "output" ? is_output_head(t) : rule.role == role;
            if (hit && in_layers(rule.layers, layer, t.n_layers)) c = {rule.type, target.name + " recipe", ""};
          }
    } else if (is_output_head(t) && bits_per_weight(target.base) < bits_per_weight(DType::Q6_K)) {
      c = {DType::Q6_K, "output head", ""};  // the head's error reaches every logit (--pure: at the target type)
    }
  }
  const DType fits = fallback_type(c.type, t.dims[0]);
  if (fits != c.type) {
    c.fallback = std::string(dtype_name(c.type)) + " does not fit rows of " + std::to_string(t.dims[0]) + " (blocks of " +
                 std::to_string(dtype_traits(c.type).block_size) + "): " + dtype_name(fits) + " instead";
    c.type = fits;
  }
  return c;
}

}  // namespace minnow::quant
