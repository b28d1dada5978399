// A Hugging Face checkpoint directory as a quantization source, converted the way
// llama.cpp's converter lays a GGUF out: llama.cpp tensor names, "<arch>.*" hyper-
// parameters, tokenizer.ggml.* from tokenizer.json, Llama's Q/K rows permuted for
// adjacent-pair RoPE, Llama 3 RoPE scaling as a rope_freqs tensor.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <numbers>

#include "base/error.hpp"
#include "models/loaders.hpp"
#include "quant/model_source.hpp"
#include "tokenizer/bpe.hpp"

namespace minnow::quant {
namespace {

[[noreturn]] void fail(const std::string& msg) { throw Error("quantize: " + msg); }

// The GGUF name of a transformers tensor name, or "" when the converter drops it.
std::string gguf_name(const std::string& hf, const FamilySpec& spec) {
  static const std::map<std::string, std::string> top = {
      {"model.embed_tokens.weight", "token_embd.weight"},
      {"model.norm.weight", "output_norm.weight"},
      {"lm_head.weight", "output.weight"},
  };
  if (auto it = top.find(hf); it != top.end()) return it->second;
  const std::string prefix = "model.layers.";
  if (hf.rfind(prefix, 0) != 0) fail("tensor '" + hf + "' has no GGUF name (not a weight minnow knows)");
  const size_t dot = hf.find('.', prefix.size());
  const std::string layer = hf.substr(prefix.size(), dot - prefix.size());
  std::string rest = hf.substr(dot + 1);
  if (rest.ends_with("rotary_emb.inv_freq")) return "";  // recomputed from rope_theta
  std::string suffix;
  for (const char* s : {".weight", ".bias"})
    if (rest.ends_with(s)) suffix = s, rest.resize(rest.size() - suffix.size());
  const std::map<std::string, std::string> names = {
      {"input_layernorm", "attn_norm"},
      {std::string(spec.hf_ffn_norm), "ffn_norm"},
      {"self_attn.q_proj", "attn_q"},
      {"self_attn.k_proj", "attn_k"},
      {"self_attn.v_proj", "attn_v"},
      {"self_attn.o_proj", "attn_output"},
      {"self_attn.q_norm", "attn_q_norm"},
      {"self_attn.k_norm", "attn_k_norm"},
      {"mlp.gate_proj", "ffn_gate"},
      {"mlp.up_proj", "ffn_up"},
      {"mlp.down_proj", "ffn_down"},
  };
  auto it = names.find(rest);
  if (!spec.hf_post_attn_norm.empty() && rest == spec.hf_post_attn_norm) return "blk." + layer + ".post_attention_norm" + suffix;
  if (!spec.hf_post_ffn_norm.empty() && rest == spec.hf_post_ffn_norm) return "blk." + layer + ".post_ffw_norm" + suffix;
  if (it == names.end() || suffix.empty()) fail("tensor '" + hf + "' has no GGUF name (not a weight minnow knows)");
  return "blk." + layer + "." + it->second + suffix;
}

// The GGUF pre-tokenizer name whose splits are exactly the tokenizer.json's.
std::string pre_tokenizer_name(const std::vector<PreSplit>& splits) {
  for (const char* name : {"gpt2", "smollm", "llama-bpe", "qwen2"}) {
    const auto preset = PreTokenizer::preset(name);
    bool same = preset.size() == splits.size();
    for (size_t i = 0; same && i < splits.size(); ++i)
      same = preset[i].regex == splits[i].regex && preset[i].behavior == splits[i].behavior;
    if (same) return name;
  }
  fail("the tokenizer's pre-tokenizer regexes match none of the GGUF presets minnow knows (gpt2, smollm, llama-bpe, qwen2)");
}

// rope_freqs for Llama 3 scaling: factor 1 for short wavelengths, `factor` for long ones,
// a smooth blend between (engines divide frequency i by factor i).
std::vector<float> llama3_rope_factors(const ModelConfig& c) {
  const RopeScaling& s = c.rope_scaling;
  const double low_wavelen = s.original_ctx / s.low_freq_factor, high_wavelen = s.original_ctx / s.high_freq_factor;
  std::vector<float> out;
  for (int i = 0; i < c.head_dim; i += 2) {
    const float freq = 1.0f / std::pow(c.rope_base, static_cast<float>(i) / static_cast<float>(c.head_dim));
    const double wavelen = 2 * std::numbers::pi / freq;
    if (wavelen < high_wavelen) {
      out.push_back(1.0f);
    } else if (wavelen > low_wavelen) {
      out.push_back(s.factor);
    } else {
      const double t = (s.original_ctx / wavelen - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
      out.push_back(static_cast<float>(1.0 / ((1 - t) / s.factor + t)));
    }
  }
  return out;
}

void write_hyper_parameters(GgufWriter& w, const ModelConfig& c) {
  const std::string p = c.arch + ".";
  w.set_string("general.architecture", c.arch);
  w.set_string("general.name", c.name);
  w.set_u32(p + "context_length", static_cast<uint32_t>(c.ctx_train));
  w.set_u32(p + "embedding_length", static_cast<uint32_t>(c.d_model));
  w.set_u32(p + "block_count", static_cast<uint32_t>(c.n_layers));
  w.set_u32(p + "feed_forward_length", static_cast<uint32_t>(c.d_ff));
  w.set_u32(p + "attention.head_count", static_cast<uint32_t>(c.n_heads));
  w.set_u32(p + "attention.head_count_kv", static_cast<uint32_t>(c.n_kv_heads));
  if (c.head_dim * c.n_heads != c.d_model) {
    w.set_u32(p + "attention.key_length", static_cast<uint32_t>(c.head_dim));
    w.set_u32(p + "attention.value_length", static_cast<uint32_t>(c.head_dim));
  }
  w.set_f32(p + "attention.layer_norm_rms_epsilon", c.rms_eps);
  w.set_f32(p + "rope.freq_base", c.rope_base);
  w.set_u32(p + "rope.dimension_count", static_cast<uint32_t>(c.head_dim));
  if (c.rope_scaling.type == RopeScaling::Type::Linear) {
    w.set_string(p + "rope.scaling.type", "linear");
    w.set_f32(p + "rope.scaling.factor", c.rope_scaling.factor);
  }
  w.set_u32(p + "vocab_size", static_cast<uint32_t>(c.vocab_size));
}

void write_tokenizer(GgufWriter& w, const BpeVocab& v, const ModelConfig& c, const std::string& chat_template) {
  std::vector<std::string> tokens = v.tokens;
  std::vector<int32_t> types;
  for (size_t i = 0; i < tokens.size(); ++i) {
    types.push_back(static_cast<int32_t>(v.types[i]));
    if (v.types[i] == TokenType::Unused && tokens[i].empty()) tokens[i] = "[PAD" + std::to_string(i) + "]";
  }
  // The embedding may have more rows than the tokenizer has tokens: GGUF wants one token per row.
  for (size_t i = tokens.size(); i < static_cast<size_t>(c.vocab_size); ++i) {
    tokens.push_back("[PAD" + std::to_string(i) + "]");
    types.push_back(static_cast<int32_t>(TokenType::Unused));
  }
  std::vector<std::string> merges;
  merges.reserve(v.merges.size());
  for (size_t i = 0; i < v.merges.size(); ++i)
    merges.push_back(std::string(v.merges.left(i)) + " " + std::string(v.merges.right(i)));
  w.set_string("tokenizer.ggml.model", "gpt2");
  w.set_string("tokenizer.ggml.pre", pre_tokenizer_name(v.pre_splits));
  w.set_strings("tokenizer.ggml.tokens", tokens);
  w.set_i32s("tokenizer.ggml.token_type", types);
  w.set_strings("tokenizer.ggml.merges", merges);
  if (v.bos_id >= 0) w.set_u32("tokenizer.ggml.bos_token_id", static_cast<uint32_t>(v.bos_id));
  if (v.eos_id >= 0) w.set_u32("tokenizer.ggml.eos_token_id", static_cast<uint32_t>(v.eos_id));
  w.set_bool("tokenizer.ggml.add_bos_token", v.add_bos);
  w.set_bool("tokenizer.ggml.add_eos_token", v.add_eos);
  if (!chat_template.empty()) w.set_string("tokenizer.chat_template", chat_template);
}

// Reads a row of an F32/F16/BF16 tensor, through `row_map` (Llama's Q/K permutation) and
// plus `offset` (Gemma's norms).
SourceTensor source_tensor(const TensorRef& t, std::string name, int permute_heads, float offset) {
  if (!t.type || (*t.type != DType::F32 && *t.type != DType::F16 && *t.type != DType::BF16))
    fail("tensor '" + t.name + "' is " + t.type_name + " (supported in checkpoints: F32, F16, BF16)");
  SourceTensor s;
  s.name = std::move(name);
  s.dims = t.dims;
  s.type_name = t.type_name;
  s.n_elements = t.n_elements;
  s.n_bytes = t.n_bytes;
  const DTypeTraits& tr = dtype_traits(*t.type);
  const int64_t cols = t.dims[0];
  const uint64_t row_bytes = static_cast<uint64_t>(cols) * static_cast<uint64_t>(tr.block_bytes);
  const int64_t rows = s.rows();
  if (permute_heads && rows % (2 * permute_heads) != 0)
    fail("tensor '" + t.name + "' has " + std::to_string(rows) + " rows, not a whole number of " + std::to_string(permute_heads) + " heads");
  const int64_t head = permute_heads ? rows / permute_heads : 0;
  const uint8_t* data = t.data;
  const DequantizeFn deq = tr.dequantize;
  s.read_row = [=](int64_t r, float* out) {
    int64_t src = r;
    if (head) {  // within a head, row 2i + j comes from row j * head/2 + i
      const int64_t h = r / head, k = r % head;
      src = h * head + (k % 2) * (head / 2) + k / 2;
    }
    deq(data + static_cast<uint64_t>(src) * row_bytes, out, cols);
    if (offset != 0)
      for (int64_t i = 0; i < cols; ++i) out[i] += offset;
  };
  return s;
}

}  // namespace

std::unique_ptr<ModelSource> open_hf_source(const std::string& dir) {
  std::shared_ptr<LoadedModel> m = load_hf_checkpoint(dir);
  const ModelConfig& c = m->config;
  const FamilySpec* spec = family_by_gguf_arch(c.arch);
  if (!spec) fail("no GGUF architecture for '" + c.arch + "'");
  // What GGUF metadata cannot say for this family (llama.cpp hard-codes it) must agree.
  if (c.sliding_window > 0 || c.attn_scale > 0 || c.attn_softcap > 0 || c.final_softcap > 0)
    fail("converting '" + c.arch + "' checkpoints (sliding windows, attention scaling) to GGUF is not supported yet");
  if (c.rope_scaling.type == RopeScaling::Type::Llama3 && c.arch != "llama")
    fail("Llama 3 RoPE scaling on '" + c.arch + "' cannot be written to GGUF");
  const bool permute = spec->gguf_rope_style == RopeStyle::AdjacentPairs;
  if (permute && (c.qkv_bias || c.o_bias)) fail("attention biases on a '" + c.arch + "' checkpoint are not supported yet");

  const std::string tok_path = (std::filesystem::path(dir) / "tokenizer.json").string();
  auto vocab = std::make_shared<BpeVocab>(bpe_vocab_from_hf_json(tok_path));
  if (vocab->symbols != BpeVocab::Symbols::ByteLevel)
    fail("'" + tok_path + "' is a SentencePiece-style tokenizer; only byte-level BPE tokenizers convert to GGUF yet");

  auto src = std::make_unique<ModelSource>();
  src->format = "safetensors";
  src->n_layers = c.n_layers;
  src->tied_output = c.tied_output;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.path().extension() == ".safetensors") src->file_bytes += e.file_size(ec);

  std::vector<float> rope_factors;
  if (c.rope_scaling.type == RopeScaling::Type::Llama3) rope_factors = llama3_rope_factors(c);
  // Converter order: token_embd, the blocks by layer, output_norm, output.
  std::vector<std::pair<std::string, const TensorRef*>> named;
  for (const TensorRef& t : m->tensors) {
    if (c.tied_output && t.name == "lm_head.weight") continue;  // a tied head stored anyway
    std::string g = gguf_name(t.name, *spec);
    if (!g.empty()) named.emplace_back(std::move(g), &t);
  }
  // Within a block, the order of the modules in transformers' layer.
  static const std::vector<std::string> block_order = {
      "attn_norm.weight", "attn_q.weight", "attn_k.weight", "attn_v.weight", "attn_q.bias", "attn_k.bias",
      "attn_v.bias", "attn_q_norm.weight", "attn_k_norm.weight", "attn_output.weight", "attn_output.bias",
      "post_attention_norm.weight", "ffn_norm.weight", "ffn_gate.weight", "ffn_up.weight", "ffn_down.weight",
      "post_ffw_norm.weight"};
  auto rank = [](const std::string& n) -> std::pair<int64_t, int> {
    if (n == "token_embd.weight") return {-1, 0};
    if (n == "output_norm.weight") return {INT64_MAX, 0};
    if (n == "output.weight") return {INT64_MAX, 1};
    const size_t dot = n.find('.', 4);
    const auto it = std::find(block_order.begin(), block_order.end(), n.substr(dot + 1));
    return {std::stoll(n.substr(4, dot - 4)), static_cast<int>(it - block_order.begin())};
  };
  std::stable_sort(named.begin(), named.end(), [&](const auto& a, const auto& b) { return rank(a.first) < rank(b.first); });
  for (const auto& [g, t] : named) {
    int heads = 0;
    if (permute && g.ends_with("attn_q.weight")) heads = c.n_heads;
    if (permute && g.ends_with("attn_k.weight")) heads = c.n_kv_heads;
    const bool norm = t->dims.size() == 1 && g.find("norm") != std::string::npos;
    src->tensors.push_back(source_tensor(*t, g, heads, norm ? spec->hf_norm_offset : 0.0f));
  }
  if (!rope_factors.empty()) {
    SourceTensor f;
    f.name = "rope_freqs.weight";
    f.dims = {static_cast<int64_t>(rope_factors.size())};
    f.type_name = "F32";
    f.n_elements = rope_factors.size();
    f.n_bytes = 4 * rope_factors.size();
    auto values = std::make_shared<std::vector<float>>(rope_factors);
    f.read_row = [values](int64_t, float* out) { std::copy(values->begin(), values->end(), out); };
    src->tensors.insert(src->tensors.begin(), std::move(f));
  }
  src->write_metadata = [m, vocab](GgufWriter& w) {
    write_hyper_parameters(w, m->config);
    write_tokenizer(w, *vocab, m->config, m->chat_template);
  };
  src->storage = m;
  return src;
}

}  // namespace minnow::quant
