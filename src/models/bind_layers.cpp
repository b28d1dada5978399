#include "models/bind_layers.hpp"

namespace minnow {

void bind_layers(const TensorTable& t, const LayerNames& n, float norm_offset, LoadedModel& m) {
  const ModelConfig& c = m.config;
  const int64_t d = c.d_model, hd = c.head_dim;
  const int64_t q_dim = int64_t{c.n_heads} * hd, kv_dim = int64_t{c.n_kv_heads} * hd;
  m.layers.resize(static_cast<size_t>(c.n_layers));
  for (int i = 0; i < c.n_layers; ++i) {
    const std::string b = n.prefix + std::to_string(i) + ".";
    auto weight = [&](const std::string& name) { return b + name + ".weight"; };
    auto bias = [&](const std::string& name) { return b + name + ".bias"; };
    auto norm = [&](const std::string& name, int64_t size) { return t.vector(weight(name), size, norm_offset); };
    LayerWeights& L = m.layers[static_cast<size_t>(i)];
    L.attn_norm = norm(n.attn_norm, d);
    L.ffn_norm = norm(n.ffn_norm, d);
    L.wq = t.matrix(weight(n.wq), d, q_dim);
    L.wk = t.matrix(weight(n.wk), d, kv_dim);
    L.wv = t.matrix(weight(n.wv), d, kv_dim);
    L.wo = t.matrix(weight(n.wo), q_dim, d);
    L.gate = t.matrix(weight(n.gate), d, c.d_ff);
    L.up = t.matrix(weight(n.up), d, c.d_ff);
    L.down = t.matrix(weight(n.down), c.d_ff, d);
    if (c.qkv_bias) {
      L.bq = t.vector(bias(n.wq), q_dim);
      L.bk = t.vector(bias(n.wk), kv_dim);
      L.bv = t.vector(bias(n.wv), kv_dim);
    }
    if (c.o_bias) L.bo = t.vector(bias(n.wo), d);
    if (c.qk_norm) {
      L.q_norm = norm(n.q_norm, hd);
      L.k_norm = norm(n.k_norm, hd);
    }
    if (c.sandwich_norm) {
      L.post_attn_norm = norm(n.post_attn_norm, d);
      L.post_ffn_norm = norm(n.post_ffn_norm, d);
    }
  }
}

}  // namespace minnow
