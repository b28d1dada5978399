#include "models/transformer.hpp"

#include <algorithm>
#include <cmath>

namespace minnow {
namespace {

void rmsnorm(const float* x, const float* w, float* y, int64_t d, float eps) {
  double ss = 0;
  for (int64_t i = 0; i < d; ++i) ss += static_cast<double>(x[i]) * x[i];
  float scale = 1.0f / std::sqrt(static_cast<float>(ss / static_cast<double>(d)) + eps);
  for (int64_t i = 0; i < d; ++i) y[i] = x[i] * scale * w[i];
}

}  // namespace

Transformer::Transformer(const LoadedModel& m, int max_batch, int ctx, ThreadPool& pool, bool int8_activations)
    : m_(m), c_(m.config), pool_(pool), max_batch_(max_batch), ctx_(ctx), int8_(int8_activations) {
  const size_t B = static_cast<size_t>(max_batch);
  const size_t d = static_cast<size_t>(c_.d_model);
  const size_t qd = static_cast<size_t>(c_.n_heads) * static_cast<size_t>(c_.head_dim);
  const size_t kvd = static_cast<size_t>(c_.n_kv_heads) * static_cast<size_t>(c_.head_dim);
  x_.resize(B * d);
  h_.resize(B * std::max(d, qd));
  tmp_.resize(B * d);
  q_.resize(B * qd);
  attn_.resize(B * qd);
  k_.resize(B * kvd);
  v_.resize(B * kvd);
  gate_.resize(B * static_cast<size_t>(c_.d_ff));
  up_.resize(B * static_cast<size_t>(c_.d_ff));
  const int half = c_.rope_dim / 2;
  inv_freq_.resize(static_cast<size_t>(half));
  for (int i = 0; i < half; ++i)
    inv_freq_[static_cast<size_t>(i)] = static_cast<float>(std::pow(static_cast<double>(c_.rope_base), -2.0 * i / c_.rope_dim));
  cos_.resize(B * static_cast<size_t>(half));
  sin_.resize(B * static_cast<size_t>(half));
  scores_.resize(static_cast<size_t>(pool.size()) * static_cast<size_t>(ctx));
}

// Rotates adjacent pairs (x[2i], x[2i+1]) of each head: GGUF stores Llama's Q/K rows
// permuted so that this "normal" RoPE equals Hugging Face's rotate-half form.
void Transformer::rope(float* x, int n, int n_heads) {
  const int hd = c_.head_dim, half = c_.rope_dim / 2;
  for (int t = 0; t < n; ++t) {
    const float* cs = &cos_[static_cast<size_t>(t) * half];
    const float* sn = &sin_[static_cast<size_t>(t) * half];
    for (int h = 0; h < n_heads; ++h) {
      float* v = x + (static_cast<int64_t>(t) * n_heads + h) * hd;
      for (int i = 0; i < half; ++i) {
        float a = v[2 * i], b = v[2 * i + 1];
        v[2 * i] = a * cs[i] - b * sn[i];
        v[2 * i + 1] = a * sn[i] + b * cs[i];
      }
    }
  }
}

// Causal grouped-query attention of n new tokens over the cache (positions 0..pos0+t).
void Transformer::attention(int layer, int n, int pos0, KvCache& kv) {
  const int hd = c_.head_dim, n_heads = c_.n_heads, group = c_.n_heads / c_.n_kv_heads;
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  const auto& kt = kernels::active();
  pool_.parallel_for(int64_t{n} * n_heads, [&](int64_t task, int thread) {
    const int t = static_cast<int>(task / n_heads), h = static_cast<int>(task % n_heads);
    const int kvh = h / group, n_pos = pos0 + t + 1;
    const float* q = &q_[(static_cast<size_t>(t) * n_heads + h) * hd];
    float* s = &scores_[static_cast<size_t>(thread) * ctx_];
    float mx = -INFINITY;
    for (int p = 0; p < n_pos; ++p) {
      s[p] = kt.dot_f32(q, kv.k(layer, p) + kvh * hd, hd) * scale;
      mx = std::max(mx, s[p]);
    }
    float sum = 0;
    for (int p = 0; p < n_pos; ++p) sum += (s[p] = std::exp(s[p] - mx));
    float* out = &attn_[(static_cast<size_t>(t) * n_heads + h) * hd];
    std::fill(out, out + hd, 0.0f);
    const float inv = 1.0f / sum;
    for (int p = 0; p < n_pos; ++p) {
      const float* v = kv.v(layer, p) + kvh * hd;
      const float w = s[p] * inv;
      for (int i = 0; i < hd; ++i) out[i] += w * v[i];
    }
  });
}

void Transformer::forward(const int32_t* tokens, int n, int pos0, KvCache& kv, float* logits, bool all_logits) {
  const int64_t d = c_.d_model, kvd = kv.row_size();
  const int half = c_.rope_dim / 2;
  for (int t = 0; t < n; ++t) kernels::dequantize_row(m_.token_embd, tokens[t], &x_[static_cast<size_t>(t * d)]);
  for (int t = 0; t < n; ++t)
    for (int i = 0; i < half; ++i) {
      float a = static_cast<float>(pos0 + t) * inv_freq_[static_cast<size_t>(i)];
      cos_[static_cast<size_t>(t * half + i)] = std::cos(a);
      sin_[static_cast<size_t>(t * half + i)] = std::sin(a);
    }

  for (int l = 0; l < c_.n_layers; ++l) {
    const LayerWeights& L = m_.layers[static_cast<size_t>(l)];
    for (int t = 0; t < n; ++t) rmsnorm(&x_[t * d], L.attn_norm.data(), &h_[t * d], d, c_.rms_eps);
    const kernels::MatmulOut qkv[] = {{&L.wq, q_.data()}, {&L.wk, k_.data()}, {&L.wv, v_.data()}};
    kernels::matmul_many(qkv, h_.data(), n, pool_, int8_);
    rope(q_.data(), n, c_.n_heads);
    rope(k_.data(), n, c_.n_kv_heads);
    for (int t = 0; t < n; ++t) {
      std::copy_n(&k_[t * kvd], kvd, kv.k(l, pos0 + t));
      std::copy_n(&v_[t * kvd], kvd, kv.v(l, pos0 + t));
    }
    attention(l, n, pos0, kv);
    kernels::matmul(L.wo, attn_.data(), n, tmp_.data(), pool_, int8_);
    for (int64_t i = 0; i < n * d; ++i) x_[i] += tmp_[i];

    for (int t = 0; t < n; ++t) rmsnorm(&x_[t * d], L.ffn_norm.data(), &h_[t * d], d, c_.rms_eps);
    const kernels::MatmulOut gate_up[] = {{&L.gate, gate_.data()}, {&L.up, up_.data()}};
    kernels::matmul_many(gate_up, h_.data(), n, pool_, int8_);
    const int64_t ff = c_.d_ff;
    pool_.parallel_for(n, [&](int64_t t, int) {
      float* g = &gate_[t * ff];
      const float* u = &up_[t * ff];
      for (int64_t i = 0; i < ff; ++i) g[i] = g[i] / (1.0f + std::exp(-g[i])) * u[i];  // SwiGLU
    });
    kernels::matmul(L.down, gate_.data(), n, tmp_.data(), pool_, int8_);
    for (int64_t i = 0; i < n * d; ++i) x_[i] += tmp_[i];
  }

  const int first = all_logits ? 0 : n - 1;
  for (int t = first; t < n; ++t) rmsnorm(&x_[t * d], m_.output_norm.data(), &h_[(t - first) * d], d, c_.rms_eps);
  kernels::matmul(m_.output, h_.data(), n - first, logits, pool_, int8_);
}

}  // namespace minnow
