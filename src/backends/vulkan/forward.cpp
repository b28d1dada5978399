#include "backends/vulkan/forward.hpp"

#include <algorithm>
#include <cstdint>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "backends/vulkan/ops.hpp"
#include "base/error.hpp"
#include "models/kv_cache.hpp"
#include "models/rope.hpp"
#include "models/transformer.hpp"

namespace minnow::vulkan {
namespace {

struct DeviceLayer {
  // q and k stacked, and v where it shares their type (one pass for all three; then wv is
  // empty), else each alone in wq, wk, wv; bqkv: the stack's biases.
  DeviceMatrix qkv;
  Buffer bqkv;
  DeviceMatrix wq, wk, wv, wo, down;
  DeviceMatrix gate_up;  // stacked, where they share a type; else gate and up
  DeviceMatrix gate, up;
  Buffer attn_norm, ffn_norm, post_attn_norm, post_ffn_norm, q_norm, k_norm, bq, bk, bv, bo;
};

// RoPE angle tables for one batch: inverse frequencies, and per token cos / sin.
struct Angles {
  std::vector<float> inv_freq;
  Buffer cos_up, sin_up;  // host-visible: written for each pass
  Buffer cos, sin;        // device copies made at the pass's start, read by the kernels (every
                          // decode attention workgroup reads them: host memory is a bus away)
};

// What one sequence keeps on its own: its KV caches (on the device, and on the host for the
// layers the CPU runs), its recorded decode pass and its logits.
struct SequenceState {
  Buffer k_cache, v_cache;
  std::unique_ptr<KvCache> cpu_kv;
  // One-token passes (decode) record the same commands whatever the position (positions
  // and angles are read from buffers): recorded once and replayed.
  std::unique_ptr<Stream> decode;
  Buffer logits;  // read back; rows grown on demand
  int64_t logit_rows = 0;
};

class VulkanModel final : public DeviceModel, public std::enable_shared_from_this<VulkanModel> {
 public:
  VulkanModel(const LoadedModel& m, int ctx, int max_batch, int device, int first_layer, ThreadPool* pool);
  std::unique_ptr<SequenceForward> sequence() override;
  int max_batch() const { return max_batch_; }
  void forward(SequenceState& seq, const int32_t* tokens, int n, int pos0, float* logits, bool all_logits);

 private:
  Buffer floats(const std::vector<float>& v);  // a vector on the device (empty: no buffer)
  // w (with `below` stacked under it), or Error naming the tensor.
  DeviceMatrix matrix(const kernels::WeightView& w, const char* name, int layer, const kernels::WeightView* below = nullptr);
  void fill_angles(Angles& a, int n, int pos0);
  // Uploads the layer's q, k and v projections, stacked where their types allow.
  void stack_qkv(const LayerWeights& L, DeviceLayer& D, int layer);
  void attention_block(Stream& s, SequenceState& seq, int l, int n);
  void ffn_block(Stream& s, int l, int n);
  void project_and_add(Stream& s, const DeviceMatrix& w, const Buffer& in, const Buffer* b, const Buffer& post_norm, int n);
  // The input of the products after an RMSNorm of x's rows (x_row0 on): x itself with the
  // norm folded into the matrix-vector kernels (a few tokens: one dispatch less), else
  // h = norm(x) written first (prompts).
  struct NormedInput {
    const Buffer* x;
    Ops::InputNorm fold;
    bool folded;
    const Ops::InputNorm* norm() const { return folded ? &fold : nullptr; }
  };
  NormedInput normed(Stream& s, const Buffer& gain, int rows, int x_row0 = 0);
  // x += post-norm(tmp) in a pass of its own, for a post-norm project_and_add left pending.
  void add_pending_post_norm(Stream& s);

  const LoadedModel& m_;
  const ModelConfig& c_;
  int max_batch_;
  int first_;  // the first layer on the device; those before run on the CPU
  ModelConfig cpu_config_;  // c_ with first_ layers: the CPU's caches hold only those
  std::unique_ptr<Transformer> cpu_;
  std::unique_ptr<Device> dev_;
  std::unique_ptr<Ops> ops_;
  std::unique_ptr<Stream> stream_;  // passes of several tokens: recorded for each
  std::vector<DeviceLayer> layers_;
  DeviceMatrix output_;
  Buffer output_norm_;
  int ctx_;
  Ops::KvLayout kv_;
  // Activations, max_batch rows each, shared by the sequences (they run one at a time).
  // The residual stream lives in x_, one of two buffers: a post-norm folded into the next
  // product (decode) writes the sum into the other one while every workgroup reads x_.
  Buffer x_a_, x_b_;
  Buffer* x_ = &x_a_;
  const Buffer* post_norm_pending_ = nullptr;  // tmp_ waits for this post-norm and its add to x_
  int pending_rows_ = 0;
  Buffer h_, q_, k_, v_, attn_, gate_up_, act_, tmp_;
  Buffer attn_part_;  // attention's splits
  // Per pass, written by the host.
  Buffer x_in_, pos_;
  Angles global_, local_;
  std::vector<float> x_host_;
};

class VulkanSequence final : public SequenceForward {
 public:
  VulkanSequence(std::shared_ptr<VulkanModel> model, SequenceState state) : model_(std::move(model)), s_(std::move(state)) {}
  int max_batch() const override { return model_->max_batch(); }
  void forward(const int32_t* tokens, int n, int pos0, float* logits, bool all_logits) override {
    model_->forward(s_, tokens, n, pos0, logits, all_logits);
  }

 private:
  std::shared_ptr<VulkanModel> model_;  // declared first: outlives the buffers below
  SequenceState s_;
};

VulkanModel::VulkanModel(const LoadedModel& m, int ctx, int max_batch, int device, int first_layer, ThreadPool* pool)
    : m_(m), c_(m.config), max_batch_(max_batch), first_(first_layer), cpu_config_(m.config), ctx_(ctx) {
  if (c_.head_dim % 2 != 0 || c_.head_dim > 256)
    throw Error("vulkan: head size " + std::to_string(c_.head_dim) + " is not supported (even, at most 256)");
  if (first_ < 0 || first_ >= c_.n_layers || (first_ > 0 && pool == nullptr))
    throw Error("vulkan: no layer to run on the device (first " + std::to_string(first_) + " of " + std::to_string(c_.n_layers) + ")");
  if (first_ > 0) {
    cpu_config_.n_layers = first_;
    cpu_ = std::make_unique<Transformer>(m, max_batch, *pool);
  }
  dev_ = Device::open(device);
  ops_ = std::make_unique<Ops>(*dev_);
  stream_ = std::make_unique<Stream>(*dev_, "prefill");
  layers_.resize(m.layers.size());  // [0, first_) stay empty
  for (size_t l = static_cast<size_t>(first_); l < m.layers.size(); ++l) {
    const LayerWeights& L = m.layers[l];
    DeviceLayer& D = layers_[l];
    const int li = static_cast<int>(l);
    stack_qkv(L, D, li);
    D.wo = matrix(L.wo, "attn_output", li);
    if (Ops::stackable(L.gate, L.up))
      D.gate_up = matrix(L.gate, "ffn_gate", li, &L.up);
    else
      D.gate = matrix(L.gate, "ffn_gate", li), D.up = matrix(L.up, "ffn_up", li);
    D.down = matrix(L.down, "ffn_down", li);
    D.attn_norm = floats(L.attn_norm), D.ffn_norm = floats(L.ffn_norm);
    D.post_attn_norm = floats(L.post_attn_norm), D.post_ffn_norm = floats(L.post_ffn_norm);
    D.q_norm = floats(L.q_norm), D.k_norm = floats(L.k_norm);
    D.bo = floats(L.bo);
  }
  output_ = matrix(m.output, "output", -1);
  output_norm_ = floats(m.output_norm);

  kv_ = {c_.n_kv_heads, c_.head_dim, ctx};
  // The kernels address the caches in 32-bit words. Device layer l's rows are cache layer l - first_.
  const int device_layers = c_.n_layers - first_;
  if (uint64_t{kv_.row_words()} * static_cast<uint64_t>(ctx) * static_cast<uint64_t>(device_layers) > UINT32_MAX)
    throw Error("vulkan: a KV cache of " + std::to_string(ctx) + " positions is too large for the kernels (lower --ctx)");

  const size_t B = static_cast<size_t>(max_batch), d = static_cast<size_t>(c_.d_model);
  const size_t qd = static_cast<size_t>(c_.n_heads) * static_cast<size_t>(c_.head_dim);
  const size_t kvd = static_cast<size_t>(c_.n_kv_heads) * static_cast<size_t>(c_.head_dim);
  const size_t ff = static_cast<size_t>(c_.d_ff);
  auto activations = [&](size_t n) { return dev_->alloc(n * sizeof(float), Memory::Device); };
  x_a_ = activations(B * d), x_b_ = activations(B * d), h_ = activations(B * std::max(d, qd)), tmp_ = activations(B * d);
  q_ = activations(B * qd), attn_ = activations(B * qd), k_ = activations(B * kvd), v_ = activations(B * kvd);
  gate_up_ = activations(B * 2 * ff), act_ = activations(B * ff);
  attn_part_ = ops_->attention_part(kv_, c_.n_heads, max_batch);
  x_in_ = dev_->alloc(B * d * sizeof(float), Memory::Upload);
  pos_ = dev_->alloc(B * sizeof(uint32_t), Memory::Upload);
  const size_t half = static_cast<size_t>(c_.head_dim / 2);
  global_.inv_freq = rope_inv_freq(c_.head_dim, c_.rope_base, c_.rope_scaling, m.rope_freq_factors);
  local_.inv_freq = rope_inv_freq(c_.head_dim, c_.rope_base_local, RopeScaling{});
  for (Angles* a : {&global_, &local_}) {
    a->cos_up = dev_->alloc(B * half * sizeof(float), Memory::Upload);
    a->sin_up = dev_->alloc(B * half * sizeof(float), Memory::Upload);
    a->cos = dev_->alloc(B * half * sizeof(float), Memory::Device);
    a->sin = dev_->alloc(B * half * sizeof(float), Memory::Device);
  }
  x_host_.resize(B * d);
}

Buffer VulkanModel::floats(const std::vector<float>& v) {
  if (v.empty()) return {};
  Buffer b = dev_->alloc(v.size() * sizeof(float), Memory::Device);
  dev_->upload(b, v.data(), v.size() * sizeof(float));
  return b;
}

DeviceMatrix VulkanModel::matrix(const kernels::WeightView& w, const char* name, int layer,
                                   const kernels::WeightView* below) {
  try {
    return below != nullptr ? ops_->upload_stacked(w, *below) : ops_->upload(w);
  } catch (const Error& e) {
    throw Error(std::string(e.what()) + " (" + (layer >= 0 ? "blk." + std::to_string(layer) + "." : "") + name + ")");
  }
}

void VulkanModel::stack_qkv(const LayerWeights& L, DeviceLayer& D, int layer) {
  const bool with_v = Ops::stackable(L.wq, L.wv);
  if (!Ops::stackable(L.wq, L.wk)) {
    D.wq = matrix(L.wq, "attn_q", layer), D.wk = matrix(L.wk, "attn_k", layer), D.wv = matrix(L.wv, "attn_v", layer);
    D.bq = floats(L.bq), D.bk = floats(L.bk), D.bv = floats(L.bv);
    return;
  }
  try {
    D.qkv = with_v ? ops_->upload_stacked({L.wq, L.wk, L.wv}) : ops_->upload_stacked({L.wq, L.wk});
  } catch (const Error& e) {
    throw Error(std::string(e.what()) + " (blk." + std::to_string(layer) + ".attn_q/k/v)");
  }
  if (!with_v) D.wv = matrix(L.wv, "attn_v", layer), D.bv = floats(L.bv);
  if (!L.bq.empty() || !L.bk.empty() || (with_v && !L.bv.empty())) {  // zeros where one has none
    std::vector<float> b(static_cast<size_t>(D.qkv.rows), 0.0f);
    const std::vector<float>* parts[3] = {&L.bq, &L.bk, &L.bv};
    const int64_t rows[3] = {L.wq.rows, L.wk.rows, L.wv.rows};
    size_t at = 0;
    for (int i = 0; i < (with_v ? 3 : 2); ++i) {
      std::copy(parts[i]->begin(), parts[i]->end(), b.begin() + static_cast<std::ptrdiff_t>(at));
      at += static_cast<size_t>(rows[i]);
    }
    D.bqkv = floats(b);
  }
}

void VulkanModel::fill_angles(Angles& a, int n, int pos0) {
  const size_t half = a.inv_freq.size();
  auto* cs = static_cast<float*>(a.cos_up.mapped());
  auto* sn = static_cast<float*>(a.sin_up.mapped());
  for (int t = 0; t < n; ++t)
    for (size_t i = 0; i < half; ++i) {
      const float angle = static_cast<float>(pos0 + t) * a.inv_freq[i];
      cs[static_cast<size_t>(t) * half + i] = std::cos(angle);
      sn[static_cast<size_t>(t) * half + i] = std::sin(angle);
    }
}

VulkanModel::NormedInput VulkanModel::normed(Stream& s, const Buffer& gain, int rows, int x_row0) {
  if (x_row0 == 0 && Ops::folds_norm(rows)) {
    NormedInput in{x_, {&gain, c_.rms_eps}, true};
    if (post_norm_pending_ != nullptr) {  // x + post-norm(tmp) computed by the product too
      Buffer* next = x_ == &x_a_ ? &x_b_ : &x_a_;
      in.fold.residual = &tmp_, in.fold.residual_gain = post_norm_pending_, in.fold.x_out = next;
      x_ = next, post_norm_pending_ = nullptr;
    }
    return in;
  }
  add_pending_post_norm(s);
  ops_->rmsnorm(s, *x_, gain, h_, rows, c_.d_model, c_.rms_eps, x_row0);
  s.barrier();
  return {&h_, {}, false};
}

void VulkanModel::add_pending_post_norm(Stream& s) {
  if (post_norm_pending_ == nullptr) return;
  ops_->rmsnorm(s, tmp_, *post_norm_pending_, *x_, pending_rows_, c_.d_model, c_.rms_eps, 0, true);
  s.barrier();
  post_norm_pending_ = nullptr;
}

// x += [post-norm](Wo · attention(RoPE(QK-norm(Wq h + bq), ...))), h = norm(x).
void VulkanModel::attention_block(Stream& s, SequenceState& seq, int l, int n) {
  const DeviceLayer& L = layers_[static_cast<size_t>(l)];
  const int64_t hd = c_.head_dim;
  const bool half_split = c_.rope_style == RopeStyle::HalfSplit;
  const NormedInput h = normed(s, L.attn_norm, n);
  auto bias = [](const Buffer& b) { return b.size() != 0 ? &b : nullptr; };
  if (L.qkv.rows != 0) {
    const int64_t nq = c_.n_heads * hd, nk = c_.n_kv_heads * hd;
    const bool with_v = L.wv.rows == 0;
    ops_->matmul_split(s, L.qkv, *h.x, q_, k_, with_v ? &v_ : nullptr, nq, with_v ? nq + nk : L.qkv.rows, n, bias(L.bqkv),
                       h.norm());
  } else {
    ops_->matmul(s, L.wq, *h.x, q_, n, bias(L.bq), false, h.norm());
    ops_->matmul(s, L.wk, *h.x, k_, n, bias(L.bk), false, h.norm());
  }
  if (L.wv.rows != 0) ops_->matmul(s, L.wv, *h.x, v_, n, bias(L.bv), false, h.norm());
  s.barrier();
  // Decode with fresh keys (Ops::fresh_kv): attention rotates the token's query and key,
  // normalized first where the family has QK norms, and writes its key and value itself.
  const bool decode = n == 1 && ops_->fresh_kv(), norms_in_attention = decode && ops_->fresh_qk_norms();
  if (!norms_in_attention && (L.q_norm.size() != 0 || L.k_norm.size() != 0)) {
    if (L.q_norm.size() != 0) ops_->rmsnorm(s, q_, L.q_norm, q_, n * c_.n_heads, hd, c_.rms_eps);
    if (L.k_norm.size() != 0) ops_->rmsnorm(s, k_, L.k_norm, k_, n * c_.n_kv_heads, hd, c_.rms_eps);
    s.barrier();
  }
  const Angles& a = c_.is_sliding(l) ? local_ : global_;
  const Ops::FreshKv fresh{&k_, &v_, &a.cos, &a.sin, half_split, norms_in_attention && L.q_norm.size() != 0 ? &L.q_norm : nullptr,
                           norms_in_attention && L.k_norm.size() != 0 ? &L.k_norm : nullptr, c_.rms_eps};
  if (!decode) {
    ops_->store_kv(s, k_, v_, a.cos, a.sin, pos_, seq.k_cache, seq.v_cache, kv_, l - first_, n, half_split, &q_, c_.n_heads);
    s.barrier();
  }
  const Ops::AttentionParams ap{c_.n_heads, c_.attn_scale > 0 ? c_.attn_scale : 1.0f / std::sqrt(static_cast<float>(hd)),
                                c_.attn_softcap, c_.is_sliding(l) ? c_.sliding_window : 0};
  ops_->attention(s, q_, seq.k_cache, seq.v_cache, pos_, attn_, attn_part_, kv_, l - first_, n, ap, decode ? &fresh : nullptr);
  s.barrier();
  project_and_add(s, L.wo, attn_, bias(L.bo), L.post_attn_norm, n);
}

// x += [post-norm](W in (+ b)): accumulated into x by the matmul itself, or by the norm
// where one comes between: in the next product's pass where that folds its input norm
// (normed()), else in a pass of its own.
void VulkanModel::project_and_add(Stream& s, const DeviceMatrix& w, const Buffer& in, const Buffer* b,
                                    const Buffer& post_norm, int n) {
  if (post_norm.size() == 0) {
    ops_->matmul(s, w, in, *x_, n, b, true);
    s.barrier();
    return;
  }
  ops_->matmul(s, w, in, tmp_, n, b);
  s.barrier();
  post_norm_pending_ = &post_norm, pending_rows_ = n;
  if (!Ops::folds_norm(n) || !ops_->fold_post_norms()) add_pending_post_norm(s);
}

// x += [post-norm](W_down · (act(W_gate h) * W_up h)), h = norm(x).
void VulkanModel::ffn_block(Stream& s, int l, int n) {
  const DeviceLayer& L = layers_[static_cast<size_t>(l)];
  const NormedInput h = normed(s, L.ffn_norm, n);
  const bool gelu = c_.activation == Activation::GeluTanh;
  if (L.gate_up.rows != 0) {
    ops_->glu_matmul(s, L.gate_up, *h.x, act_, gate_up_, n, gelu, h.norm());
  } else {
    ops_->matmul(s, L.gate, *h.x, gate_up_, n, nullptr, false, h.norm());
    ops_->matmul(s, L.up, *h.x, act_, n, nullptr, false, h.norm());
    s.barrier();
    ops_->glu(s, gate_up_, act_, act_, n, c_.d_ff, c_.d_ff, 0, gelu);
  }
  s.barrier();
  project_and_add(s, L.down, act_, nullptr, L.post_ffn_norm, n);
}

std::unique_ptr<SequenceForward> VulkanModel::sequence() {
  SequenceState seq;
  seq.k_cache = ops_->kv_cache(kv_, c_.n_layers - first_);
  seq.v_cache = ops_->kv_cache(kv_, c_.n_layers - first_);
  if (first_ > 0) seq.cpu_kv = std::make_unique<KvCache>(cpu_config_, ctx_, DType::F16);
  seq.decode = std::make_unique<Stream>(*dev_, "decode");
  return std::make_unique<VulkanSequence>(shared_from_this(), std::move(seq));
}

void VulkanModel::forward(SequenceState& seq, const int32_t* tokens, int n, int pos0, float* logits, bool all_logits) {
  if (n <= 0 || n > max_batch_) throw Error("vulkan: " + std::to_string(n) + " tokens in one pass (1.." + std::to_string(max_batch_) + ")");
  if (pos0 < 0 || pos0 + n > ctx_) throw Error("vulkan: positions beyond the KV cache's " + std::to_string(ctx_));
  const int64_t d = c_.d_model, vocab = c_.vocab_size;
  if (cpu_ != nullptr) {
    cpu_->forward_layers(tokens, n, pos0, *seq.cpu_kv, first_, x_host_.data());
  } else {
    for (int t = 0; t < n; ++t) kernels::dequantize_row(m_.token_embd, tokens[t], &x_host_[static_cast<size_t>(t * d)]);
    if (c_.embed_scale != 1.0f)
      for (int64_t i = 0; i < n * d; ++i) x_host_[static_cast<size_t>(i)] *= c_.embed_scale;
  }
  std::memcpy(x_in_.mapped(), x_host_.data(), static_cast<size_t>(n * d) * sizeof(float));
  auto* pos = static_cast<uint32_t*>(pos_.mapped());
  for (int t = 0; t < n; ++t) pos[t] = static_cast<uint32_t>(pos0 + t);
  fill_angles(global_, n, pos0);
  if (c_.sliding_window > 0) fill_angles(local_, n, pos0);

  const int64_t rows = all_logits ? n : 1;
  if (rows > seq.logit_rows) {
    seq.logits = dev_->alloc(static_cast<size_t>(rows * vocab) * sizeof(float), Memory::Readback);
    seq.logit_rows = rows;
    if (seq.decode->kept()) seq.decode->clear();  // it wrote into the old buffer
  }
  const bool replayable = n == 1;
  Stream& s = replayable ? *seq.decode : *stream_;
  if (!(replayable && s.kept())) {
    x_ = &x_a_, post_norm_pending_ = nullptr;  // a pass cut short by an error left nothing behind
    s.copy(x_in_, 0, *x_, 0, static_cast<size_t>(n * d) * sizeof(float));
    const size_t angle_bytes = static_cast<size_t>(n * (c_.head_dim / 2)) * sizeof(float);
    for (Angles* a : {&global_, &local_})
      if (a == &global_ || c_.sliding_window > 0) {
        s.copy(a->cos_up, 0, a->cos, 0, angle_bytes);
        s.copy(a->sin_up, 0, a->sin, 0, angle_bytes);
      }
    s.barrier();
    for (int l = first_; l < c_.n_layers; ++l) {
      attention_block(s, seq, l, n);
      ffn_block(s, l, n);
    }
    const NormedInput h = normed(s, output_norm_, static_cast<int>(rows), all_logits ? 0 : n - 1);
    ops_->matmul(s, output_, *h.x, seq.logits, rows, nullptr, false, h.norm());
    if (replayable) s.keep();
  }
  if (replayable)
    s.replay();
  else
    s.submit_and_wait();
  dev_->download(seq.logits, logits, static_cast<size_t>(rows * vocab) * sizeof(float));
  if (c_.final_softcap > 0)
    for (int64_t i = 0; i < rows * vocab; ++i) logits[i] = c_.final_softcap * std::tanh(logits[i] / c_.final_softcap);
}

}  // namespace

std::shared_ptr<DeviceModel> upload_model(const LoadedModel& m, int ctx, int max_batch, int device, int first_layer,
                                          ThreadPool* pool) {
  return std::make_shared<VulkanModel>(m, ctx, max_batch, device, first_layer, pool);
}

}  // namespace minnow::vulkan
