#include "quant/hessian_collector.hpp"

#include <cstring>

namespace minnow::quant {
namespace {

constexpr int kTile = 4;  // h is summed in kTile x kTile tiles, 4 tokens at a time
typedef float F4 __attribute__((vector_size(16)));

// out[a][b] = sum_r xt[i0 + a][r] xt[j0 + b][r] over `rows` (a multiple of 4) tokens.
void tile(const float* xt, int64_t rows, int64_t i0, int64_t j0, float out[kTile][kTile]) {
  F4 acc[kTile][kTile] = {};
  for (int64_t r = 0; r < rows; r += 4) {
    F4 vi[kTile], vj[kTile];
    for (int a = 0; a < kTile; ++a)
      std::memcpy(&vi[a], xt + (i0 + a) * rows + r, 16), std::memcpy(&vj[a], xt + (j0 + a) * rows + r, 16);
    for (int a = 0; a < kTile; ++a)
      for (int b = 0; b < kTile; ++b) acc[a][b] += vi[a] * vj[b];
  }
  for (int a = 0; a < kTile; ++a)
    for (int b = 0; b < kTile; ++b) out[a][b] = acc[a][b][0] + acc[a][b][1] + acc[a][b][2] + acc[a][b][3];
}

}  // namespace

void add_second_moments(const float* x, int rows, int64_t cols, float* h, std::vector<float>& scratch, ThreadPool& pool) {
  // x transposed (one column per row, contiguous), columns padded to whole tiles and tokens
  // to a multiple of 4, with zeros.
  const int64_t n = cols, padded = (cols + kTile - 1) / kTile * kTile, stride = (rows + 3) / 4 * 4;
  scratch.assign(static_cast<size_t>(padded * stride), 0.0f);
  for (int r = 0; r < rows; ++r)
    for (int64_t j = 0; j < n; ++j) scratch[static_cast<size_t>(j * stride + r)] = x[r * cols + j];
  // Tiles on and above the diagonal; a tile straddling the edge adds its in-range sums.
  pool.parallel_for(padded / kTile, [&](int64_t ti, int) {
    const int64_t i0 = ti * kTile;
    for (int64_t j0 = i0; j0 < padded; j0 += kTile) {
      float sums[kTile][kTile];
      tile(scratch.data(), stride, i0, j0, sums);
      for (int a = 0; a < kTile && i0 + a < n; ++a)
        for (int b = 0; b < kTile && j0 + b < n; ++b) h[(i0 + a) * n + j0 + b] += sums[a][b];
    }
  });
}

HessianCollector::HessianCollector(const LoadedModel& m, ThreadPool& pool) : pool_(pool), sites_(m), sums_(sites_.size()) {}

void HessianCollector::observe(int layer, MatmulSite site, const float* x, int rows, int64_t cols) {
  Sums& s = sums_[sites_.index(layer, site)];
  const bool head = layer < 0;  // as wide as the model, its matrix the vocabulary: the diagonal alone
  if (!s.m) {
    s.m = std::make_shared<SecondMoments>();
    s.m->n = cols;
    if (head) s.diag.assign(static_cast<size_t>(cols), 0.0);
    else s.m->h.assign(static_cast<size_t>(cols * cols), 0.0f);
  }
  s.m->rows += rows;
  if (!head) return add_second_moments(x, rows, cols, s.m->h.data(), xt_, pool_);
  for (int r = 0; r < rows; ++r)
    for (int64_t j = 0; j < cols; ++j) s.diag[static_cast<size_t>(j)] += static_cast<double>(x[r * cols + j]) * x[r * cols + j];
}

std::map<std::string, std::shared_ptr<SecondMoments>> HessianCollector::take() {
  std::map<std::string, std::shared_ptr<SecondMoments>> out;
  for (size_t i = 0; i < sums_.size(); ++i) {
    Sums& s = sums_[i];
    if (!s.m || s.m->rows == 0) continue;
    SecondMoments& m = *s.m;
    const int64_t n = m.n;
    const double rows = static_cast<double>(m.rows);
    m.diag.resize(static_cast<size_t>(n));
    if (m.h.empty()) {
      for (int64_t j = 0; j < n; ++j) m.diag[j] = static_cast<float>(s.diag[j] / rows);
    } else {
      const float inv = static_cast<float>(1.0 / rows);
      for (int64_t a = 0; a < n; ++a)
        for (int64_t b = a; b < n; ++b) m.h[a * n + b] = m.h[b * n + a] = m.h[a * n + b] * inv;
      for (int64_t j = 0; j < n; ++j) m.diag[j] = m.h[j * n + j];
    }
    for (const std::string& name : sites_.names(i)) out[name] = s.m;
    s.m.reset();
  }
  return out;
}

}  // namespace minnow::quant
