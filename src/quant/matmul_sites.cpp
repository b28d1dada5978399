#include "quant/matmul_sites.hpp"

namespace minnow::quant {
namespace {
constexpr int kSites = 5;  // MatmulSite's values
}

MatmulSites::MatmulSites(const LoadedModel& m) : n_layers_(m.config.n_layers) {
  names_.resize(static_cast<size_t>((n_layers_ + 1) * kSites));
  for (int l = 0; l < n_layers_; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    names_[index(l, MatmulSite::AttnQkv)] = {b + "attn_q.weight", b + "attn_k.weight", b + "attn_v.weight"};
    names_[index(l, MatmulSite::AttnOut)] = {b + "attn_output.weight"};
    names_[index(l, MatmulSite::FfnGateUp)] = {b + "ffn_gate.weight", b + "ffn_up.weight"};
    names_[index(l, MatmulSite::FfnDown)] = {b + "ffn_down.weight"};
  }
  // A tied head multiplies by the embedding matrix: its columns are what the stats weigh.
  const bool tied = m.output.data == m.token_embd.data;
  names_[index(-1, MatmulSite::Output)] = {tied ? "token_embd.weight" : "output.weight"};
}

size_t MatmulSites::index(int layer, MatmulSite site) const {
  return static_cast<size_t>(layer < 0 ? n_layers_ * kSites : layer * kSites + static_cast<int>(site));
}

}  // namespace minnow::quant
