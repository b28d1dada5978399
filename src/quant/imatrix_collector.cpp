#include "quant/imatrix_collector.hpp"

namespace minnow::quant {
namespace {
constexpr int kSites = 5;  // MatmulSite's values
}

ImatrixCollector::ImatrixCollector(const LoadedModel& m) : n_layers_(m.config.n_layers) {
  sums_.resize(static_cast<size_t>((n_layers_ + 1) * kSites));
  names_.resize(sums_.size());
  for (int l = 0; l < n_layers_; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    const auto at = [&](MatmulSite s) -> auto& { return names_[static_cast<size_t>(l * kSites + static_cast<int>(s))]; };
    at(MatmulSite::AttnQkv) = {b + "attn_q.weight", b + "attn_k.weight", b + "attn_v.weight"};
    at(MatmulSite::AttnOut) = {b + "attn_output.weight"};
    at(MatmulSite::FfnGateUp) = {b + "ffn_gate.weight", b + "ffn_up.weight"};
    at(MatmulSite::FfnDown) = {b + "ffn_down.weight"};
  }
  // A tied head multiplies by the embedding matrix: its columns are what the stats weigh.
  const bool tied = m.output.data == m.token_embd.data;
  names_[static_cast<size_t>(n_layers_ * kSites)] = {tied ? "token_embd.weight" : "output.weight"};
}

ImatrixCollector::Sums& ImatrixCollector::sums(int layer, MatmulSite site, int64_t cols) {
  const int l = layer < 0 ? n_layers_ : layer;
  Sums& s = sums_[static_cast<size_t>(l * kSites + (layer < 0 ? 0 : static_cast<int>(site)))];
  if (s.sum2.empty()) s.sum2.assign(static_cast<size_t>(cols), 0.0);
  return s;
}

void ImatrixCollector::observe(int layer, MatmulSite site, const float* x, int rows, int64_t cols) {
  Sums& s = sums(layer, site, cols);
  for (int r = 0; r < rows; ++r) {
    const float* row = x + static_cast<int64_t>(r) * cols;
    for (int64_t j = 0; j < cols; ++j) s.sum2[static_cast<size_t>(j)] += static_cast<double>(row[j]) * row[j];
  }
  s.rows += rows;
}

Imatrix ImatrixCollector::result() const {
  Imatrix m;
  for (size_t i = 0; i < sums_.size(); ++i) {
    const Sums& s = sums_[i];
    if (s.rows == 0) continue;
    ImatrixEntry e{std::vector<float>(s.sum2.begin(), s.sum2.end()), {static_cast<float>(s.rows)}};
    for (const std::string& name : names_[i]) m.entries[name] = e;
  }
  return m;
}

}  // namespace minnow::quant
