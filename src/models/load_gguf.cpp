// Loads a GGUF model: hyper-parameters from "<arch>.*" metadata, tensors by llama.cpp's
// names ("blk.N.attn_q.weight", ...), tokenizer from "tokenizer.ggml.*".
#include <cmath>
#if defined(__GLIBC__)
#include <malloc.h>  // malloc_trim
#endif

#include "base/error.hpp"
#include "formats/gguf.hpp"
#include "models/bind_layers.hpp"
#include "models/loaders.hpp"
#include "kernels/packed.hpp"
#include "models/pack_weights.hpp"
#include "models/packed_gguf.hpp"

namespace minnow {
namespace {

[[noreturn]] void fail(const std::string& msg) { throw Error("model: " + msg); }

int require_int(const GgufFile& f, const std::string& key, int64_t lo, int64_t hi) {
  auto v = f.get_int(key);
  if (!v) fail("missing metadata '" + key + "'");
  if (*v < lo || *v > hi)
    fail("metadata '" + key + "' = " + std::to_string(*v) + " is out of range [" + std::to_string(lo) + ", " +
         std::to_string(hi) + "]");
  return static_cast<int>(*v);
}

int optional_int(const GgufFile& f, const std::string& key, int64_t lo, int64_t hi, int fallback) {
  return f.get_int(key) ? require_int(f, key, lo, hi) : fallback;
}

void read_rope(const GgufFile& f, const std::string& p, const FamilySpec& spec, ModelConfig& c) {
  c.rope_style = spec.gguf_rope_style;
  c.rope_base = static_cast<float>(f.get_float(p + "rope.freq_base").value_or(10000.0));
  c.rope_base_local = spec.gguf_rope_base_local;
  if (optional_int(f, p + "rope.dimension_count", 2, c.head_dim, c.head_dim) != c.head_dim)
    fail("partial RoPE (rope.dimension_count < head dim) is not supported yet");
  const std::string type(f.get_string(p + "rope.scaling.type").value_or("none"));
  if (type == "linear") {
    c.rope_scaling.type = RopeScaling::Type::Linear;
    c.rope_scaling.factor = static_cast<float>(f.get_float(p + "rope.scaling.factor").value_or(1.0));
    if (!(c.rope_scaling.factor > 0)) fail("metadata '" + p + "rope.scaling.factor' must be positive");
  } else if (type != "none") {
    fail("RoPE scaling '" + type + "' is not supported yet (supported: none, linear, Llama 3 rope_freqs)");
  }
}

TensorRef to_ref(const GgufTensor& t) {
  TensorRef r;
  r.name = t.name;
  r.type = t.type;
  r.type_name = dtype_name(t.type);
  r.dims = t.dims;
  r.n_elements = t.n_elements;
  r.n_bytes = t.n_bytes;
  r.data = t.data;
  r.packed = t.packed;
  if (t.packed) r.type_name += std::string("/") + kernels::kPackedLayoutName;
  return r;
}

void bind(const GgufFile& f, const FamilySpec& spec, LoadedModel& m) {
  ModelConfig& c = m.config;
  const std::string p = c.arch + ".";
  c.n_layers = require_int(f, p + "block_count", 1, 1024);
  c.d_model = require_int(f, p + "embedding_length", 1, 1 << 16);
  c.d_ff = require_int(f, p + "feed_forward_length", 1, 1 << 18);
  c.n_heads = require_int(f, p + "attention.head_count", 1, 1024);
  c.n_kv_heads = optional_int(f, p + "attention.head_count_kv", 1, 1024, c.n_heads);
  c.ctx_train = require_int(f, p + "context_length", 1, 1 << 24);
  if (c.n_heads % c.n_kv_heads != 0) fail("attention.head_count is not a multiple of attention.head_count_kv");
  if (!f.get_int(p + "attention.key_length") && c.d_model % c.n_heads != 0)
    fail("embedding_length is not a multiple of attention.head_count");
  c.head_dim = optional_int(f, p + "attention.key_length", 2, 4096, c.d_model / c.n_heads);
  if (optional_int(f, p + "attention.value_length", 2, 4096, c.head_dim) != c.head_dim)
    fail("attention.value_length differs from attention.key_length; not supported yet");
  auto eps = f.get_float(p + "attention.layer_norm_rms_epsilon");
  if (!eps) fail("missing metadata '" + p + "attention.layer_norm_rms_epsilon'");
  c.rms_eps = static_cast<float>(*eps);
  read_rope(f, p, spec, c);

  c.qkv_bias = spec.qkv_bias;
  c.qk_norm = spec.qk_norm;
  c.sandwich_norm = spec.sandwich_norm;
  c.activation = spec.activation;
  c.attn_softcap = static_cast<float>(f.get_float(p + "attn_logit_softcapping").value_or(0.0));
  c.final_softcap = static_cast<float>(f.get_float(p + "final_logit_softcapping").value_or(0.0));
  c.sliding_window = optional_int(f, p + "attention.sliding_window", 0, 1 << 24, 0);
  if (c.sliding_window > 0) {
    if (spec.gguf_global_every <= 0) fail("sliding-window attention is not supported for '" + c.arch + "' yet");
    for (int i = 0; i < c.n_layers; ++i) c.layer_sliding.push_back((i + 1) % spec.gguf_global_every != 0);
  }

  const TensorTable t(m.tensors);
  const TensorRef& embd = t.get("token_embd.weight");
  if (embd.dims.size() != 2) fail("tensor 'token_embd.weight' is not 2-D");
  c.vocab_size = static_cast<int>(embd.dims[1]);
  m.token_embd = TensorTable::matrix(embd, c.d_model, c.vocab_size);
  const TensorRef* out = t.find("output.weight");
  c.tied_output = out == nullptr;
  m.output = out ? TensorTable::matrix(*out, c.d_model, c.vocab_size) : m.token_embd;
  m.output_norm = t.vector("output_norm.weight", c.d_model);
  if (t.find("rope_freqs.weight")) m.rope_freq_factors = t.vector("rope_freqs.weight", c.head_dim / 2);
  if (spec.scale_embeddings) c.embed_scale = std::sqrt(static_cast<float>(c.d_model));

  // llama.cpp's names.
  const LayerNames names{.prefix = "blk.",
                         .attn_norm = "attn_norm",
                         .ffn_norm = "ffn_norm",
                         .post_attn_norm = "post_attention_norm",
                         .post_ffn_norm = "post_ffw_norm",
                         .wq = "attn_q",
                         .wk = "attn_k",
                         .wv = "attn_v",
                         .wo = "attn_output",
                         .gate = "ffn_gate",
                         .up = "ffn_up",
                         .down = "ffn_down",
                         .q_norm = "attn_q_norm",
                         .k_norm = "attn_k_norm"};
  bind_layers(t, names, 0.0f, m);
}

}  // namespace

std::unique_ptr<LoadedModel> load_gguf_model(const std::string& path) {
  auto m = std::make_unique<LoadedModel>();
  std::shared_ptr<GgufFile> file = GgufFile::open(path);
  const GgufFile& f = *file;
  m->storage = file;
  m->format = "gguf";
  try {
    auto arch = f.get_string("general.architecture");
    if (!arch) fail("missing metadata 'general.architecture'");
    m->config.arch = std::string(*arch);
    m->config.name = std::string(f.get_string("general.name").value_or(""));
    const FamilySpec* spec = family_by_gguf_arch(*arch);
    if (!spec) fail("architecture '" + m->config.arch + "' is not supported yet (supported: " + supported_families() + ")");
    const PackInfo pack = check_packed_gguf(f);
    if (!pack.layout.empty()) {
      m->pack_layout = pack.layout + " v" + std::to_string(pack.version);
      for (const auto& t : f.tensors())  // the map is page-aligned and offsets were checked: a guard
        if (t.packed && reinterpret_cast<uintptr_t>(t.data) % kernels::kPackedAlignment != 0)
          fail("packed tensor '" + t.name + "' is not " + std::to_string(kernels::kPackedAlignment) + "-byte aligned");
    }
    for (const auto& t : f.tensors()) m->tensors.push_back(to_ref(t));
    bind(f, *spec, *m);
    validate_config(m->config);
    m->tokenizer = tokenizer_from_gguf(f);
    if (m->tokenizer->vocab_size() != m->config.vocab_size)
      fail("tokenizer has " + std::to_string(m->tokenizer->vocab_size()) + " tokens but the embedding has " +
           std::to_string(m->config.vocab_size) + " rows");
    m->chat_template = std::string(f.get_string("tokenizer.chat_template").value_or(spec->default_chat_template));
    // Matrices a packed file holds are used in place (read-only file pages); the rest are
    // copied into the packed layout here.
    pack_weights(*m, [&f](const uint8_t* p, size_t n) { f.drop_pages(p, n); });
    file->release_metadata();  // all read by now; only the map is kept (m->storage)
#if defined(__GLIBC__)
    // Loading frees MBs of parse-time temporaries (string lists, merge lists, lookup
    // results) in sizes glibc keeps in the heap: give those pages back, or they stay
    // charged to the app as anonymous memory for the model's lifetime.
    malloc_trim(0);
#endif
  } catch (const Error& e) {
    throw Error(path + ": " + e.what());
  }
  return m;
}

}  // namespace minnow
