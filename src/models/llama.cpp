// Binds a GGUF file of architecture "llama" (Llama 1/2/3, SmolLM, ...) to a Model.
// On-disk tensor names live in one table; each tensor's shape is checked against the
// hyper-parameters from metadata.
#include "base/error.hpp"
#include "models/families.hpp"

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

// On-disk names of the per-layer tensors, after the "blk.N." prefix.
struct LayerNames {
  const char* attn_norm = "attn_norm.weight";
  const char* wq = "attn_q.weight";
  const char* wk = "attn_k.weight";
  const char* wv = "attn_v.weight";
  const char* wo = "attn_output.weight";
  const char* ffn_norm = "ffn_norm.weight";
  const char* gate = "ffn_gate.weight";
  const char* up = "ffn_up.weight";
  const char* down = "ffn_down.weight";
};

const GgufTensor& get_tensor(const GgufFile& f, const std::string& name) {
  const GgufTensor* t = f.find_tensor(name);
  if (!t) fail("missing tensor '" + name + "'");
  return *t;
}

// A weight of GGUF shape [cols, rows] (cols fastest-varying) that the kernels can run.
kernels::WeightView matrix(const GgufTensor& t, int64_t cols, int64_t rows) {
  bool ok = t.dims.size() == 2 ? (t.dims[0] == cols && t.dims[1] == rows) : (t.dims.size() == 1 && rows == 1 && t.dims[0] == cols);
  if (!ok)
    fail("tensor '" + t.name + "' has an unexpected shape (want [" + std::to_string(cols) + ", " +
         std::to_string(rows) + "])");
  const DTypeTraits& tr = dtype_traits(t.type);
  if (!tr.dequantize) fail("tensor '" + t.name + "' has type " + tr.name + ", which minnow does not support yet");
  return {t.type, t.data, rows, cols, static_cast<size_t>(t.n_bytes / static_cast<uint64_t>(rows))};
}

kernels::WeightView matrix(const GgufFile& f, const std::string& name, int64_t cols, int64_t rows) {
  return matrix(get_tensor(f, name), cols, rows);
}

std::vector<float> norm_weights(const GgufFile& f, const std::string& name, int64_t n) {
  kernels::WeightView w = matrix(f, name, n, 1);
  std::vector<float> out(static_cast<size_t>(n));
  kernels::dequantize_row(w, 0, out.data());
  return out;
}

}  // namespace

void bind_llama(const GgufFile& f, LoadedModel& m) {
  ModelConfig& c = m.config;
  const std::string p = c.arch + ".";
  c.n_layers = require_int(f, p + "block_count", 1, 1024);
  c.d_model = require_int(f, p + "embedding_length", 1, 1 << 16);
  c.d_ff = require_int(f, p + "feed_forward_length", 1, 1 << 18);
  c.n_heads = require_int(f, p + "attention.head_count", 1, 1024);
  c.n_kv_heads = f.get_int(p + "attention.head_count_kv") ? require_int(f, p + "attention.head_count_kv", 1, 1024)
                                                          : c.n_heads;
  c.ctx_train = require_int(f, p + "context_length", 1, 1 << 24);
  if (c.d_model % c.n_heads != 0) fail("embedding_length is not a multiple of attention.head_count");
  if (c.n_heads % c.n_kv_heads != 0) fail("attention.head_count is not a multiple of attention.head_count_kv");
  c.head_dim = c.d_model / c.n_heads;
  if (f.get_int(p + "attention.key_length")) c.head_dim = require_int(f, p + "attention.key_length", 1, 4096);
  if (c.head_dim % 2 != 0) fail("head dimension " + std::to_string(c.head_dim) + " is odd; RoPE needs pairs");
  c.rope_dim = f.get_int(p + "rope.dimension_count") ? require_int(f, p + "rope.dimension_count", 2, c.head_dim)
                                                     : c.head_dim;
  if (c.rope_dim != c.head_dim) fail("partial RoPE (rope.dimension_count < head dim) is not supported yet");
  c.rope_base = static_cast<float>(f.get_float(p + "rope.freq_base").value_or(10000.0));
  auto eps = f.get_float(p + "attention.layer_norm_rms_epsilon");
  if (!eps) fail("missing metadata '" + p + "attention.layer_norm_rms_epsilon'");
  c.rms_eps = static_cast<float>(*eps);
  if (f.find_tensor("rope_freqs.weight")) fail("RoPE frequency scaling (rope_freqs) is not supported yet");

  const GgufTensor& embd = get_tensor(f, "token_embd.weight");
  if (embd.dims.size() != 2) fail("tensor 'token_embd.weight' is not 2-D");
  c.vocab_size = static_cast<int>(embd.dims[1]);
  m.token_embd = matrix(embd, c.d_model, c.vocab_size);
  const GgufTensor* out = f.find_tensor("output.weight");
  c.tied_output = out == nullptr;
  m.output = out ? matrix(*out, c.d_model, c.vocab_size) : m.token_embd;
  m.output_norm = norm_weights(f, "output_norm.weight", c.d_model);

  const LayerNames n;
  const int64_t q_dim = int64_t{c.n_heads} * c.head_dim, kv_dim = int64_t{c.n_kv_heads} * c.head_dim;
  m.layers.resize(static_cast<size_t>(c.n_layers));
  for (int i = 0; i < c.n_layers; ++i) {
    const std::string b = "blk." + std::to_string(i) + ".";
    LayerWeights& L = m.layers[static_cast<size_t>(i)];
    L.attn_norm = norm_weights(f, b + n.attn_norm, c.d_model);
    L.ffn_norm = norm_weights(f, b + n.ffn_norm, c.d_model);
    L.wq = matrix(f, b + n.wq, c.d_model, q_dim);
    L.wk = matrix(f, b + n.wk, c.d_model, kv_dim);
    L.wv = matrix(f, b + n.wv, c.d_model, kv_dim);
    L.wo = matrix(f, b + n.wo, q_dim, c.d_model);
    L.gate = matrix(f, b + n.gate, c.d_model, c.d_ff);
    L.up = matrix(f, b + n.up, c.d_model, c.d_ff);
    L.down = matrix(f, b + n.down, c.d_ff, c.d_model);
  }
}

}  // namespace minnow
