#include "encoder/bert.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "base/error.hpp"
#include "base/thread_pool.hpp"
#include "kernels/packed.hpp"
#include "tensor/dtype.hpp"

namespace minnow {
namespace {

using nlohmann::json;

[[noreturn]] void fail(const std::string& msg) { throw Error("bert: " + msg); }

int64_t positive(const json& j, const char* key) {
  if (!j.contains(key) || !j.at(key).is_number_integer()) fail(std::string("config.json has no integer '") + key + "'");
  const auto v = j.at(key).get<int64_t>();
  if (v <= 0 || v > (int64_t{1} << 24)) fail(std::string("config.json '") + key + "' = " + std::to_string(v) + " is out of range");
  return v;
}

// Rows of a row-major tensor as the matmul kernels take them.
kernels::WeightView view_of(const SafetensorsTensor& t) {
  if (!t.type) fail("tensor '" + t.name + "' has dtype " + t.dtype + " (supported: F32, F16, BF16)");
  const int64_t rows = t.shape.size() == 2 ? t.shape[0] : 1;
  const int64_t cols = t.shape.empty() ? 1 : t.shape.back();
  return {*t.type, t.data, rows, cols, static_cast<size_t>(t.n_bytes / static_cast<uint64_t>(rows)), nullptr};
}

std::vector<float> to_f32(const kernels::WeightView& w) {
  std::vector<float> out(static_cast<size_t>(w.rows * w.cols));
  for (int64_t r = 0; r < w.rows; ++r) kernels::dequantize_row(w, r, out.data() + r * w.cols);
  return out;
}

// y = layer_norm(x + add) * w + b over rows of d values; add may be null, y may be x.
void add_layer_norm(const float* x, const float* add, const std::vector<float>& w, const std::vector<float>& b, float* y,
                    int64_t rows, int64_t d, float eps, ThreadPool& pool) {
  // Sums in 8 lanes (then the lanes): vectorizable in order, no -ffast-math needed.
  constexpr int kLanes = 8;
  auto sum = [](const float* v, int64_t n, auto term) {
    float lane[kLanes] = {};
    int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes)
      for (int l = 0; l < kLanes; ++l) lane[l] += term(v[i + l]);
    float total = 0;
    for (float x : lane) total += x;
    for (; i < n; ++i) total += term(v[i]);
    return total;
  };
  pool.parallel_for(rows, [&](int64_t r, int) {
    const float* xr = x + r * d;
    float* yr = y + r * d;
    for (int64_t i = 0; i < d; ++i) yr[i] = add ? xr[i] + add[r * d + i] : xr[i];
    const float mean = sum(yr, d, [](float v) { return v; }) / static_cast<float>(d);
    const float var = sum(yr, d, [mean](float v) { return (v - mean) * (v - mean); }) / static_cast<float>(d);
    const float inv = 1.0f / std::sqrt(var + eps);
    for (int64_t i = 0; i < d; ++i) yr[i] = (yr[i] - mean) * inv * w[static_cast<size_t>(i)] + b[static_cast<size_t>(i)];
  });
}

void activate(float* x, int64_t n, BertConfig::Activation a, const kernels::KernelTable& kt) {
  switch (a) {
    case BertConfig::Activation::GeluErf: return kt.gelu_erf(x, x, n);
    case BertConfig::Activation::GeluTanh:
      for (int64_t i = 0; i < n; ++i) x[i] = 0.5f * x[i] * (1.0f + std::tanh(0.7978845608028654f * (x[i] + 0.044715f * x[i] * x[i] * x[i])));
      return;
    case BertConfig::Activation::Relu:
      for (int64_t i = 0; i < n; ++i) x[i] = x[i] > 0 ? x[i] : 0;
      return;
  }
}

}  // namespace

BertConfig read_bert_config(const std::string& dir) {
  const std::string path = (std::filesystem::path(dir) / "config.json").string();
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot open '" + path + "'");
  json j;
  try {
    j = json::parse(in);
  } catch (const json::exception& e) {
    fail("'" + path + "' is not valid JSON: " + e.what());
  }
  if (!j.is_object()) fail("'" + path + "' is not a JSON object");
  const std::string type = j.value("model_type", std::string());
  if (type != "bert") fail("model_type '" + type + "' is not supported (supported: bert)");
  BertConfig c;
  c.hidden = positive(j, "hidden_size");
  c.n_layers = positive(j, "num_hidden_layers");
  c.n_heads = positive(j, "num_attention_heads");
  c.intermediate = positive(j, "intermediate_size");
  c.max_positions = positive(j, "max_position_embeddings");
  c.type_vocab = positive(j, "type_vocab_size");
  c.vocab = positive(j, "vocab_size");
  if (c.hidden % c.n_heads) fail("hidden_size is not a multiple of num_attention_heads");
  if (j.contains("layer_norm_eps") && j.at("layer_norm_eps").is_number()) c.layer_norm_eps = j.at("layer_norm_eps").get<float>();
  const std::string act = j.value("hidden_act", std::string("gelu"));
  if (act == "gelu") c.activation = BertConfig::Activation::GeluErf;
  else if (act == "gelu_new" || act == "gelu_pytorch_tanh") c.activation = BertConfig::Activation::GeluTanh;
  else if (act == "relu") c.activation = BertConfig::Activation::Relu;
  else fail("hidden_act '" + act + "' is not supported (supported: gelu, gelu_new, gelu_pytorch_tanh, relu)");
  const std::string pos = j.value("position_embedding_type", std::string("absolute"));
  if (pos != "absolute") fail("position_embedding_type '" + pos + "' is not supported (supported: absolute)");
  if (j.contains("pad_token_id") && j.at("pad_token_id").is_number_integer()) c.pad_token_id = j.at("pad_token_id").get<int32_t>();
  return c;
}

void BertEncoder::FreeAligned::operator()(uint8_t* p) const { std::free(p); }

uint8_t* BertEncoder::own(size_t bytes) {
  auto* mem = static_cast<uint8_t*>(std::aligned_alloc(64, (bytes + 63) / 64 * 64));
  if (!mem) throw Error("bert: out of memory");
  owned_.emplace_back(mem);
  return mem;
}

// The matrix in the form the chosen precision multiplies.
BertEncoder::Linear BertEncoder::convert(const kernels::WeightView& w, std::vector<float> bias, Precision p) {
  Linear l{w, {}, std::move(bias)};
  if (p == Precision::BF16 && w.cols % 2 == 0) {
    auto* panels = reinterpret_cast<uint16_t*>(own(kernels::bf16_panels_size(w.rows, w.cols) * 2));
    kernels::pack_bf16_panels(w, panels);
    l.bf16 = {w.rows, w.cols, panels};
  } else if (p == Precision::Q8_0 && w.cols % 32 == 0) {
    const int64_t nb = w.cols / 32;
    const size_t row_bytes = static_cast<size_t>(nb) * 34;
    std::vector<uint8_t> rows(row_bytes * static_cast<size_t>(w.rows));
    std::vector<float> row(static_cast<size_t>(w.cols));
    for (int64_t r = 0; r < w.rows; ++r) {
      kernels::dequantize_row(w, r, row.data());
      quantize_q8_0(row.data(), rows.data() + static_cast<size_t>(r) * row_bytes, nb);
    }
    const kernels::WeightView q{DType::Q8_0, rows.data(), w.rows, w.cols, row_bytes, nullptr};
    l.w = {DType::Q8_0, nullptr, w.rows, w.cols, row_bytes, own(kernels::packed_bytes(DType::Q8_0, w.rows, w.cols))};
    kernels::pack_rows(q, const_cast<uint8_t*>(l.w.packed));  // only the packed copy is kept
  }
  return l;
}

void BertEncoder::Linear::apply(const float* x, int64_t n_tokens, float* y, ThreadPool& pool) const {
  if (bf16.panels) return kernels::matmul_bf16(bf16, x, n_tokens, y, pool, b.data());
  kernels::matmul(w, x, n_tokens, y, pool);
  const auto d = static_cast<int64_t>(b.size());
  for (int64_t t = 0; t < n_tokens; ++t)
    for (int64_t i = 0; i < d; ++i) y[t * d + i] += b[static_cast<size_t>(i)];
}

std::unique_ptr<BertEncoder> BertEncoder::load(const std::string& dir, Precision precision) {
  std::unique_ptr<BertEncoder> e(new BertEncoder());
  e->c_ = read_bert_config(dir);
  e->weights_ = SafetensorsCheckpoint::open(dir);
  const BertConfig& c = e->c_;
  const std::string prefix = e->weights_->find("bert.embeddings.word_embeddings.weight") ? "bert." : "";
  auto tensor = [&](const std::string& name, int64_t rows, int64_t cols) {
    const SafetensorsTensor* t = e->weights_->find(prefix + name);
    if (!t) fail("the checkpoint has no tensor '" + prefix + name + "'");
    const std::vector<int64_t> want = rows ? std::vector<int64_t>{rows, cols} : std::vector<int64_t>{cols};
    if (t->shape != want) fail("tensor '" + t->name + "' has the wrong shape for config.json");
    return view_of(*t);
  };
  auto norm = [&](const std::string& name) {
    return Norm{to_f32(tensor(name + ".weight", 0, c.hidden)), to_f32(tensor(name + ".bias", 0, c.hidden))};
  };
  auto linear = [&](const std::string& name, int64_t out, int64_t in) {
    return e->convert(tensor(name + ".weight", out, in), to_f32(tensor(name + ".bias", 0, out)), precision);
  };
  // Q, K and V as one F32 matrix (one pass over the input; each token's q | k | v adjacent).
  auto fused_qkv = [&](const std::string& p) {
    const int64_t H = c.hidden;
    auto* rows = reinterpret_cast<float*>(e->own(static_cast<size_t>(3 * H * H) * sizeof(float)));
    std::vector<float> bias;
    int64_t r = 0;
    for (const char* part : {"query", "key", "value"}) {
      const kernels::WeightView w = tensor(p + "attention.self." + part + ".weight", H, H);
      for (int64_t i = 0; i < H; ++i, ++r) kernels::dequantize_row(w, i, rows + r * H);
      const std::vector<float> b = to_f32(tensor(p + "attention.self." + part + ".bias", 0, H));
      bias.insert(bias.end(), b.begin(), b.end());
    }
    const kernels::WeightView w{DType::F32, reinterpret_cast<const uint8_t*>(rows), 3 * H, H, static_cast<size_t>(H) * 4,
                                nullptr};
    return e->convert(w, std::move(bias), precision);
  };
  e->word_emb_ = tensor("embeddings.word_embeddings.weight", c.vocab, c.hidden);
  e->pos_emb_ = tensor("embeddings.position_embeddings.weight", c.max_positions, c.hidden);
  e->type_emb_ = tensor("embeddings.token_type_embeddings.weight", c.type_vocab, c.hidden);
  e->emb_norm_ = norm("embeddings.LayerNorm");
  for (int64_t l = 0; l < c.n_layers; ++l) {
    const std::string p = "encoder.layer." + std::to_string(l) + ".";
    Layer L;
    L.qkv = fused_qkv(p);
    L.attn_out = linear(p + "attention.output.dense", c.hidden, c.hidden);
    L.attn_norm = norm(p + "attention.output.LayerNorm");
    L.up = linear(p + "intermediate.dense", c.intermediate, c.hidden);
    L.down = linear(p + "output.dense", c.hidden, c.intermediate);
    L.out_norm = norm(p + "output.LayerNorm");
    e->layers_.push_back(std::move(L));
  }
  return e;
}

// ctx = softmax(q k^T / sqrt(head_dim)) v per sequence and head; qkv holds q, k and v for
// every token (3 * hidden values per row). Per (sequence, head): the head's q (scaled), k
// and v^T copied out contiguously, then two f32 GEMMs: the scores, and the weighted sum.
void BertEncoder::attention(const float* qkv, std::span<const int64_t> starts, float* ctx, ThreadPool& pool) const {
  const int64_t H = c_.hidden, hd = H / c_.n_heads, stride = 3 * H;
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  const auto n_seqs = static_cast<int64_t>(starts.size()) - 1;
  const kernels::KernelTable& kt = kernels::active();
  pool.parallel_for(n_seqs * c_.n_heads, [&](int64_t task, int) {
    const int64_t s = task / c_.n_heads, h = task % c_.n_heads;
    const int64_t first = starts[static_cast<size_t>(s)], len = starts[static_cast<size_t>(s) + 1] - first;
    thread_local std::vector<float> buf;
    buf.resize(static_cast<size_t>(3 * len * hd + len * len));
    float *q = buf.data(), *k = q + len * hd, *vt = k + len * hd, *scores = vt + len * hd;
    for (int64_t t = 0; t < len; ++t) {
      const float* row = qkv + (first + t) * stride + h * hd;
      for (int64_t d = 0; d < hd; ++d) {
        q[t * hd + d] = row[d] * scale;
        k[t * hd + d] = row[H + d];
        vt[d * len + t] = row[2 * H + d];
      }
    }
    kt.gemm_f32(k, len, q, len, hd, scores, len);  // scores[i * len + j] = q_i . k_j
    for (int64_t i = 0; i < len; ++i) {
      float* si = scores + i * len;
      const float mx = *std::max_element(si, si + len);
      const float inv = 1.0f / kt.exp_sum(si, len, mx);
      for (int64_t j = 0; j < len; ++j) si[j] *= inv;
    }
    kt.gemm_f32(vt, hd, scores, len, len, ctx + first * H + h * hd, H);  // ctx_i = sum_j p_ij v_j
  });
}

void BertEncoder::forward(std::span<const std::span<const int32_t>> seqs, std::vector<float>& out, ThreadPool& pool) const {
  const int64_t H = c_.hidden;
  std::vector<int64_t> starts{0};
  for (auto s : seqs) {
    if (static_cast<int64_t>(s.size()) > c_.max_positions)
      fail("a sequence of " + std::to_string(s.size()) + " tokens is longer than the model's " +
           std::to_string(c_.max_positions) + " positions");
    for (int32_t id : s)
      if (id < 0 || id >= c_.vocab) fail("token id " + std::to_string(id) + " is out of the vocabulary");
    starts.push_back(starts.back() + static_cast<int64_t>(s.size()));
  }
  const int64_t T = starts.back();
  out.assign(static_cast<size_t>(T * H), 0.0f);
  float* x = out.data();
  // Embeddings: word + position + token type 0, then LayerNorm.
  std::vector<float> row(static_cast<size_t>(H)), type0(static_cast<size_t>(H));
  kernels::dequantize_row(type_emb_, 0, type0.data());
  for (size_t s = 0; s < seqs.size(); ++s)
    for (int64_t p = 0; p < static_cast<int64_t>(seqs[s].size()); ++p) {
      float* xr = x + (starts[s] + p) * H;
      kernels::dequantize_row(word_emb_, seqs[s][static_cast<size_t>(p)], xr);
      kernels::dequantize_row(pos_emb_, p, row.data());
      for (int64_t i = 0; i < H; ++i) xr[i] += row[static_cast<size_t>(i)] + type0[static_cast<size_t>(i)];
    }
  add_layer_norm(x, nullptr, emb_norm_.w, emb_norm_.b, x, T, H, c_.layer_norm_eps, pool);

  const int64_t I = c_.intermediate;
  std::vector<float> qkv(static_cast<size_t>(T * 3 * H)), ctx(static_cast<size_t>(T * H)), proj(ctx.size());
  std::vector<float> up(static_cast<size_t>(T * I));
  const kernels::KernelTable& kt = kernels::active();
  for (const Layer& L : layers_) {
    L.qkv.apply(x, T, qkv.data(), pool);
    attention(qkv.data(), starts, ctx.data(), pool);
    L.attn_out.apply(ctx.data(), T, proj.data(), pool);
    add_layer_norm(x, proj.data(), L.attn_norm.w, L.attn_norm.b, x, T, H, c_.layer_norm_eps, pool);
    L.up.apply(x, T, up.data(), pool);
    pool.parallel_for(T, [&](int64_t t, int) { activate(up.data() + t * I, I, c_.activation, kt); });
    L.down.apply(up.data(), T, proj.data(), pool);
    add_layer_norm(x, proj.data(), L.out_norm.w, L.out_norm.b, x, T, H, c_.layer_norm_eps, pool);
  }
}

}  // namespace minnow
