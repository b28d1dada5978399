// Which weight matrices each matmul input feeds, by GGUF name: the table both calibration
// collectors (imatrix, GPTQ) file their statistics under.
#pragma once
#include <string>
#include <vector>

#include "models/matmul_observer.hpp"
#include "models/model.hpp"

namespace minnow::quant {

class MatmulSites {
 public:
  explicit MatmulSites(const LoadedModel& m);
  // How many sites there are, and the one a MatmulObserver call refers to (layer -1: the head).
  size_t size() const { return names_.size(); }
  size_t index(int layer, MatmulSite site) const;
  // The weights fed by site i: Q, K and V share one input, as do gate and up; the head is
  // token_embd.weight when the embedding is tied to it.
  const std::vector<std::string>& names(size_t i) const { return names_[i]; }

 private:
  std::vector<std::vector<std::string>> names_;
  int n_layers_;
};

}  // namespace minnow::quant
