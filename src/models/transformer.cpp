#include "models/transformer.hpp"

#include <algorithm>
#include <cmath>

#include "base/error.hpp"
#include "kernels/ops.hpp"
#include "models/attention.hpp"
#include "models/rope.hpp"

namespace minnow {
namespace {

// The feed-forward block runs over as many rows at a time as fit this much gate and up
// scratch (at least 32): d_ff-wide rows are the largest per-token buffers (2 x 8960 floats a
// token for Qwen2.5-1.5B: 10 MB for a 136-token batch). Each chunk reads (and the AMX tiles
// unpack) every FFN weight again, so fewer, larger chunks pay: 8 MiB (112 rows of the 1.5B)
// against 4 (48 rows) gave its pp512 +5% for 7 MB more anonymous memory. The count is a whole
// number of matrix tiles' tokens (chunks of 58 left a 128-token prompt's last 12 off the tiles).
constexpr size_t kFfnScratchBytes = size_t{8} << 20;

// In place over `rows` rows of d values.
void rmsnorm_rows(float* x, const std::vector<float>& w, int64_t rows, int64_t d, float eps) {
  kernels::active().rmsnorm(x, w.data(), x, rows, d, eps);
}

void add_bias(float* y, const std::vector<float>& b, int64_t rows) {
  if (b.empty()) return;
  const auto d = static_cast<int64_t>(b.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t i = 0; i < d; ++i) y[r * d + i] += b[static_cast<size_t>(i)];
}

float softcap(float x, float cap) { return cap * std::tanh(x / cap); }

}  // namespace

Transformer::Transformer(const LoadedModel& m, int max_batch, ThreadPool& pool, bool int8_activations)
    : m_(m), c_(m.config), pool_(pool), max_batch_(max_batch), int8_(int8_activations) {
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
  const size_t ff = static_cast<size_t>(c_.d_ff);
  const size_t fit = kFfnScratchBytes / (2 * sizeof(float) * ff) / kernels::kTileTokens * kernels::kTileTokens;
  ffn_rows_ = static_cast<int>(std::min(B, std::max<size_t>(32, fit)));
  gate_.resize(static_cast<size_t>(ffn_rows_) * ff);
  up_.resize(static_cast<size_t>(ffn_rows_) * ff);
  const size_t half = static_cast<size_t>(c_.head_dim / 2);
  rope_global_.inv_freq = rope_inv_freq(c_.head_dim, c_.rope_base, c_.rope_scaling, m.rope_freq_factors);
  rope_local_.inv_freq = rope_inv_freq(c_.head_dim, c_.rope_base_local, RopeScaling{});
  for (RopeTable* r : {&rope_global_, &rope_local_}) {
    r->cos.resize(B * half);
    r->sin.resize(B * half);
  }
  attn_scratch_.resize(static_cast<size_t>(pool.size()) * attn_scratch_floats(c_.head_dim));
  attn_blocks_.resize(B + 1);
  pos_.resize(B);
  rows_.resize(B);
  kvs_.resize(B);
  // Unpacked matrices (F32/F16/BF16, types without packed kernels) go through per-thread
  // scratch: grown here on every thread, not by whichever thread first gets such a task.
  int64_t unpacked_cols = m.output.packed ? 0 : m.output.cols;
  for (const LayerWeights& L : m.layers)
    for (const kernels::WeightView* w : {&L.wq, &L.wk, &L.wv, &L.wo, &L.gate, &L.up, &L.down})
      if (!w->packed) unpacked_cols = std::max(unpacked_cols, w->cols);
  kernels::reserve_matmul_scratch(unpacked_cols, pool);
}

void Transformer::fill_rope(RopeTable& r, const Batch& b) {
  const size_t half = r.inv_freq.size();
  for (int t = 0; t < b.n; ++t)
    for (size_t i = 0; i < half; ++i) {
      const float a = static_cast<float>(b.pos[t]) * r.inv_freq[i];
      r.cos[static_cast<size_t>(t) * half + i] = std::cos(a);
      r.sin[static_cast<size_t>(t) * half + i] = std::sin(a);
    }
}

// x += [post-norm](Wo · attention(RoPE(QK-norm(Wq h + bq), ...))), h = norm(x).
void Transformer::attention_block(int l, const Batch& b) {
  const LayerWeights& L = m_.layers[static_cast<size_t>(l)];
  const int n = b.n;
  const int64_t d = c_.d_model, hd = c_.head_dim, kvd = int64_t{c_.n_kv_heads} * hd;
  const kernels::KernelTable& kt = kernels::active();
  kt.rmsnorm(x_.data(), L.attn_norm.data(), h_.data(), n, d, c_.rms_eps);
  if (observer_) observer_->observe(l, MatmulSite::AttnQkv, h_.data(), n, d);
  const kernels::MatmulOut qkv[] = {{&L.wq, q_.data()}, {&L.wk, k_.data()}, {&L.wv, v_.data()}};
  kernels::matmul_many(qkv, h_.data(), n, pool_, int8_, b.n_vector);
  add_bias(q_.data(), L.bq, n);
  add_bias(k_.data(), L.bk, n);
  add_bias(v_.data(), L.bv, n);
  if (!L.q_norm.empty()) rmsnorm_rows(q_.data(), L.q_norm, int64_t{n} * c_.n_heads, hd, c_.rms_eps);
  if (!L.k_norm.empty()) rmsnorm_rows(k_.data(), L.k_norm, int64_t{n} * c_.n_kv_heads, hd, c_.rms_eps);
  const RopeTable& r = c_.is_sliding(l) ? rope_local_ : rope_global_;
  const size_t half = r.inv_freq.size();
  for (int t = 0; t < n; ++t) {
    const float* cs = &r.cos[static_cast<size_t>(t) * half];
    const float* sn = &r.sin[static_cast<size_t>(t) * half];
    rope_rotate(&q_[static_cast<size_t>(t * c_.n_heads * hd)], c_.n_heads, c_.head_dim, cs, sn, c_.rope_style);
    float* k = &k_[t * kvd];
    const float* v = &v_[t * kvd];
    KvCache& kv = *b.kv[t];
    if (kv.type() == DType::F16) {  // rotated and rounded straight into the cache row
      auto* k_row = static_cast<uint16_t*>(kv.k_dst(l, b.pos[t]));
      auto* v_row = static_cast<uint16_t*>(kv.v_dst(l, b.pos[t]));
      kt.rope_store_kv_f16(k, v, c_.n_kv_heads, hd, cs, sn, c_.rope_style == RopeStyle::HalfSplit, k_row, v_row);
      continue;
    }
    rope_rotate(k, c_.n_kv_heads, c_.head_dim, cs, sn, c_.rope_style);
    kv.store_k(l, b.pos[t], k);
    kv.store_v(l, b.pos[t], v);
  }
  attention(l, b);
  if (observer_) observer_->observe(l, MatmulSite::AttnOut, attn_.data(), n, int64_t{c_.n_heads} * hd);
  kernels::matmul(L.wo, attn_.data(), n, tmp_.data(), pool_, int8_, b.n_vector);
  add_bias(tmp_.data(), L.bo, n);
  if (!L.post_attn_norm.empty()) rmsnorm_rows(tmp_.data(), L.post_attn_norm, n, d, c_.rms_eps);
  for (int64_t i = 0; i < n * d; ++i) x_[i] += tmp_[i];
}

// x += [post-norm](W_down · (act(W_gate h) * W_up h)), h = norm(x).
void Transformer::ffn_block(int l, const Batch& b) {
  const LayerWeights& L = m_.layers[static_cast<size_t>(l)];
  const int n = b.n;
  const int64_t d = c_.d_model, ff = c_.d_ff;
  const kernels::KernelTable& kt = kernels::active();
  kt.rmsnorm(x_.data(), L.ffn_norm.data(), h_.data(), n, d, c_.rms_eps);
  const auto glu = c_.activation == Activation::GeluTanh ? kt.glu_gelu_tanh : kt.glu_silu;
  for (int r0 = 0; r0 < n; r0 += ffn_rows_) {
    const int rows = std::min(ffn_rows_, n - r0);
    const int n_vector = std::clamp(b.n_vector - r0, 0, rows);  // decode rows come first
    const float* h = &h_[static_cast<size_t>(r0) * static_cast<size_t>(d)];
    if (observer_) observer_->observe(l, MatmulSite::FfnGateUp, h, rows, d);
    const kernels::MatmulOut gate_up[] = {{&L.gate, gate_.data()}, {&L.up, up_.data()}};
    kernels::matmul_many(gate_up, h, rows, pool_, int8_, n_vector);
    // One row per call: a value's place in its row, not the batch size, picks its code path.
    pool_.parallel_for(rows, [&](int64_t t, int) { glu(&gate_[t * ff], &up_[t * ff], &gate_[t * ff], ff); });
    if (observer_) observer_->observe(l, MatmulSite::FfnDown, gate_.data(), rows, ff);
    kernels::matmul(L.down, gate_.data(), rows, &tmp_[static_cast<size_t>(r0) * static_cast<size_t>(d)], pool_, int8_,
                    n_vector);
  }
  if (!L.post_ffn_norm.empty()) rmsnorm_rows(tmp_.data(), L.post_ffn_norm, n, d, c_.rms_eps);
  for (int64_t i = 0; i < n * d; ++i) x_[i] += tmp_[i];
}

void Transformer::run_layers(const Batch& b, int n_layers) {
  const int n = b.n;
  const int64_t d = c_.d_model;
  for (int t = 0; t < n; ++t) kernels::dequantize_row(m_.token_embd, b.tokens[t], &x_[static_cast<size_t>(t * d)]);
  if (c_.embed_scale != 1.0f)
    for (int64_t i = 0; i < n * d; ++i) x_[i] *= c_.embed_scale;
  fill_rope(rope_global_, b);
  if (c_.sliding_window > 0) fill_rope(rope_local_, b);

  for (int l = 0; l < n_layers; ++l) {
    attention_block(l, b);
    ffn_block(l, b);
  }
}

void Transformer::forward(const Batch& b, float* logits) {
  const int64_t d = c_.d_model;
  run_layers(b, c_.n_layers);

  int n_vector_logits = 0;
  for (int i = 0; i < b.n_logits; ++i) {
    const int t = b.logit_rows[i];
    kernels::active().rmsnorm(&x_[t * d], m_.output_norm.data(), &h_[i * d], 1, d, c_.rms_eps);
    n_vector_logits += t < b.n_vector;
  }
  if (observer_) observer_->observe(-1, MatmulSite::Output, h_.data(), b.n_logits, d);
  kernels::matmul(m_.output, h_.data(), b.n_logits, logits, pool_, int8_, n_vector_logits);
  if (c_.final_softcap > 0) {
    const int64_t count = int64_t{b.n_logits} * c_.vocab_size;
    for (int64_t i = 0; i < count; ++i) logits[i] = softcap(logits[i], c_.final_softcap);
  }
}

Transformer::Batch Transformer::sequence(const int32_t* tokens, int n, int pos0, KvCache& kv, bool all_logits) {
  const int first = all_logits ? 0 : n - 1;
  for (int t = 0; t < n; ++t) {
    pos_[static_cast<size_t>(t)] = pos0 + t;
    kvs_[static_cast<size_t>(t)] = &kv;
    rows_[static_cast<size_t>(t)] = first + t;
  }
  // A few tokens (decode) go through the per-row kernels, longer prompts through the GEMM.
  const int n_vector = n < kernels::kPrefillMinTokens ? n : 0;
  return Batch{tokens, pos_.data(), kvs_.data(), n, n_vector, rows_.data(), n - first};
}

void Transformer::forward(const int32_t* tokens, int n, int pos0, KvCache& kv, float* logits, bool all_logits) {
  forward(sequence(tokens, n, pos0, kv, all_logits), logits);
}

void Transformer::forward_layers(const int32_t* tokens, int n, int pos0, KvCache& kv, int n_layers, float* x) {
  if (n_layers < 0 || n_layers > c_.n_layers) throw Error("forward_layers: " + std::to_string(n_layers) + " layers");
  run_layers(sequence(tokens, n, pos0, kv, false), n_layers);
  std::copy(x_.begin(), x_.begin() + int64_t{n} * c_.d_model, x);
}

}  // namespace minnow
