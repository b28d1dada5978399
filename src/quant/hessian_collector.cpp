#include "quant/hessian_collector.hpp"

#include <algorithm>
#include <cstring>

namespace minnow::quant {
namespace {

constexpr int kSites = 5;  // MatmulSite's values
constexpr int kTile = 4;   // h is summed in kTile x kTile tiles, 4 tokens at a time
typedef float F4 __attribute__((vector_size(16)));

// h[i][j] += sum_r xt[i][r] xt[j][r] for the tile at (i0, j0); rows a multiple of 4.
void tile(const float* xt, int64_t stride, int64_t rows, int64_t i0, int64_t j0, int64_t n, float* h) {
  F4 acc[kTile][kTile] = {};
  const float* xi[kTile];
  const float* xj[kTile];
  for (int a = 0; a < kTile; ++a) xi[a] = xt + (i0 + a) * stride, xj[a] = xt + (j0 + a) * stride;
  for (int64_t r = 0; r < rows; r += 4) {
    F4 vi[kTile], vj[kTile];
    for (int a = 0; a < kTile; ++a) std::memcpy(&vi[a], xi[a] + r, 16), std::memcpy(&vj[a], xj[a] + r, 16);
    for (int a = 0; a < kTile; ++a)
      for (int b = 0; b < kTile; ++b) acc[a][b] += vi[a] * vj[b];
  }
  for (int a = 0; a < kTile; ++a)
    for (int b = 0; b < kTile; ++b) h[(i0 + a) * n + j0 + b] += acc[a][b][0] + acc[a][b][1] + acc[a][b][2] + acc[a][b][3];
}

}  // namespace

HessianCollector::HessianCollector(const LoadedModel& m, ThreadPool& pool) : pool_(pool), n_layers_(m.config.n_layers) {
  sites_.resize(static_cast<size_t>((n_layers_ + 1) * kSites));
  for (int l = 0; l < n_layers_; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    const auto at = [&](MatmulSite s) -> auto& { return sites_[static_cast<size_t>(l * kSites + static_cast<int>(s))].names; };
    at(MatmulSite::AttnQkv) = {b + "attn_q.weight", b + "attn_k.weight", b + "attn_v.weight"};
    at(MatmulSite::AttnOut) = {b + "attn_output.weight"};
    at(MatmulSite::FfnGateUp) = {b + "ffn_gate.weight", b + "ffn_up.weight"};
    at(MatmulSite::FfnDown) = {b + "ffn_down.weight"};
  }
  const bool tied = m.output.data == m.token_embd.data;
  sites_[static_cast<size_t>(n_layers_ * kSites)].names = {tied ? "token_embd.weight" : "output.weight"};
}

void HessianCollector::observe(int layer, MatmulSite site, const float* x, int rows, int64_t cols) {
  Site& s = sites_[static_cast<size_t>(layer < 0 ? n_layers_ * kSites : layer * kSites + static_cast<int>(site))];
  if (!s.m) {
    s.m = std::make_shared<SecondMoments>();
    s.m->n = cols;
    if (layer >= 0) s.m->h.assign(static_cast<size_t>(cols * cols), 0.0f);
    else s.diag.assign(static_cast<size_t>(cols), 0.0);
  }
  s.m->rows += rows;
  if (layer < 0) {  // the head: the diagonal alone (its input is as wide as the model, its matrix the vocabulary)
    for (int r = 0; r < rows; ++r)
      for (int64_t j = 0; j < cols; ++j) s.diag[static_cast<size_t>(j)] += static_cast<double>(x[r * cols + j]) * x[r * cols + j];
    return;
  }
  add_second_moments(x, rows, cols, s.m->h.data(), xt_, pool_);
}

void add_second_moments(const float* x, int rows, int64_t cols, float* h, std::vector<float>& scratch, ThreadPool& pool) {
  // Columns padded to a whole tile, tokens to a multiple of 4, both with zeros.
  const int64_t n = cols, np = (cols + kTile - 1) / kTile * kTile, stride = (rows + 3) / 4 * 4;
  scratch.assign(static_cast<size_t>(np * stride), 0.0f);
  for (int r = 0; r < rows; ++r)
    for (int64_t j = 0; j < n; ++j) scratch[static_cast<size_t>(j * stride + r)] = x[r * cols + j];
  // Upper-triangle tiles only (take() mirrors them); a tile straddling the edge keeps its
  // in-range sums.
  const int64_t tiles = np / kTile;
  pool.parallel_for(tiles, [&](int64_t ti, int) {
    const int64_t i0 = ti * kTile;
    for (int64_t j0 = i0; j0 < np; j0 += kTile) {
      if (i0 + kTile <= n && j0 + kTile <= n) {
        tile(scratch.data(), stride, stride, i0, j0, n, h);
        continue;
      }
      F4 acc[kTile][kTile] = {};
      for (int64_t r = 0; r < stride; r += 4)
        for (int a = 0; a < kTile; ++a)
          for (int b = 0; b < kTile; ++b) {
            F4 vi, vj;
            std::memcpy(&vi, scratch.data() + (i0 + a) * stride + r, 16);
            std::memcpy(&vj, scratch.data() + (j0 + b) * stride + r, 16);
            acc[a][b] += vi * vj;
          }
      for (int a = 0; a < kTile; ++a)
        for (int b = 0; b < kTile; ++b)
          if (i0 + a < n && j0 + b < n) h[(i0 + a) * n + j0 + b] += acc[a][b][0] + acc[a][b][1] + acc[a][b][2] + acc[a][b][3];
    }
  });
}

std::map<std::string, std::shared_ptr<SecondMoments>> HessianCollector::take() {
  std::map<std::string, std::shared_ptr<SecondMoments>> out;
  for (Site& s : sites_) {
    if (!s.m || s.m->rows == 0) continue;
    SecondMoments& m = *s.m;
    const float inv = 1.0f / static_cast<float>(m.rows);
    if (!s.diag.empty()) {
      m.h.resize(s.diag.size());
      for (size_t j = 0; j < s.diag.size(); ++j) m.h[j] = static_cast<float>(s.diag[j] / static_cast<double>(m.rows));
    } else {
      const int64_t n = m.n;
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = i; j < n; ++j) {
          const float v = m.h[i * n + j] * inv;
          m.h[i * n + j] = v, m.h[j * n + i] = v;
        }
    }
    for (const std::string& name : s.names) out[name] = s.m;
    s.m.reset();
  }
  return out;
}

}  // namespace minnow::quant
