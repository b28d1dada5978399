// Transformer::attention: causal grouped-query attention over the KV cache.
#include <algorithm>
#include <cmath>

#include "models/transformer.hpp"

namespace minnow {
namespace {

float softcap(float x, float cap) { return cap * std::tanh(x / cap); }

}  // namespace

// Causal grouped-query attention of each row over its sequence's cache (positions
// 0..pos, or the last sliding_window of them on sliding-window layers). With an f16
// cache, the query heads that share a KV head are done together when there are enough
// tasks for the threads, so each K/V row is converted once for all of them.
void Transformer::attention(int layer, const Batch& b) {
  const int hd = c_.head_dim, n_heads = c_.n_heads, group = c_.n_heads / c_.n_kv_heads;
  const float scale = c_.attn_scale > 0 ? c_.attn_scale : 1.0f / std::sqrt(static_cast<float>(hd));
  const float cap = c_.attn_softcap;
  const int window = c_.is_sliding(layer) ? c_.sliding_window : 0;
  const auto& kt = kernels::active();
  int per_task = 1;  // query heads per task: a divisor of group, at most kMaxAttnQueries
  if (int64_t{b.n} * c_.n_kv_heads >= 4 * pool_.size())
    for (int g = std::min(group, kernels::kMaxAttnQueries); g > 1 && per_task == 1; --g)
      if (group % g == 0) per_task = g;
  const int tasks_per_row = n_heads / per_task;
  pool_.parallel_for(int64_t{b.n} * tasks_per_row, [&](int64_t task, int thread) {
    const int t = static_cast<int>(task / tasks_per_row), h0 = static_cast<int>(task % tasks_per_row) * per_task;
    const KvCache& kv = *b.kv[t];
    const int kvh = h0 / group, end = b.pos[t] + 1, begin = window > 0 ? std::max(0, end - window) : 0, n = end - begin;
    const float* q = &q_[(static_cast<size_t>(t) * n_heads + h0) * hd];
    float* out = &attn_[(static_cast<size_t>(t) * n_heads + h0) * hd];
    float* s = &scores_[static_cast<size_t>(thread) * kernels::kMaxAttnQueries * ctx_];  // per_task rows of ctx
    // This KV head's rows: consecutive positions are row_bytes() apart.
    const auto* k0 = static_cast<const uint8_t*>(kv.k(layer, begin)) + kv.head_offset(kvh);
    const auto* v0 = static_cast<const uint8_t*>(kv.v(layer, begin)) + kv.head_offset(kvh);
    const auto stride = static_cast<int64_t>(kv.row_bytes());
    switch (kv.type()) {
      case DType::F16:
        kt.attn_scores_f16(q, per_task, reinterpret_cast<const uint16_t*>(k0), stride / 2, n, hd, s, ctx_);
        break;
      case DType::Q8_0: kt.attn_scores_q8(q, per_task, k0, stride, n, hd, s, ctx_); break;
      default:
        for (int g = 0; g < per_task; ++g)
          for (int p = 0; p < n; ++p)
            s[static_cast<size_t>(g) * ctx_ + p] = kt.dot_f32(q + g * hd, reinterpret_cast<const float*>(k0 + p * stride), hd);
    }
    for (int g = 0; g < per_task; ++g) {  // softmax of each head's scores, in place
      float* sg = s + static_cast<size_t>(g) * ctx_;
      float mx = -INFINITY;
      for (int p = 0; p < n; ++p) {
        float x = sg[p] * scale;
        if (cap > 0) x = softcap(x, cap);
        sg[p] = x;
        mx = std::max(mx, x);
      }
      const float inv = 1.0f / kt.exp_sum(sg, n, mx);
      for (int p = 0; p < n; ++p) sg[p] *= inv;
    }
    std::fill(out, out + static_cast<size_t>(per_task) * hd, 0.0f);
    switch (kv.type()) {
      case DType::F16:
        kt.attn_values_f16(s, per_task, ctx_, reinterpret_cast<const uint16_t*>(v0), stride / 2, n, hd, out);
        break;
      case DType::Q8_0: kt.attn_values_q8(s, per_task, ctx_, v0, stride, n, hd, out); break;
      default:
        for (int g = 0; g < per_task; ++g)
          for (int p = 0; p < n; ++p) {
            const float* v = reinterpret_cast<const float*>(v0 + p * stride);
            const float w = s[static_cast<size_t>(g) * ctx_ + p];
            for (int i = 0; i < hd; ++i) out[g * hd + i] += w * v[i];
          }
    }
  });
}

}  // namespace minnow
