#include "quant/imatrix_collector.hpp"

namespace minnow::quant {

ImatrixCollector::ImatrixCollector(const LoadedModel& m) : sites_(m), sums_(sites_.size()) {}

void ImatrixCollector::observe(int layer, MatmulSite site, const float* x, int rows, int64_t cols) {
  Sums& s = sums_[sites_.index(layer, site)];
  if (s.sum2.empty()) s.sum2.assign(static_cast<size_t>(cols), 0.0);
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
    for (const std::string& name : sites_.names(i)) m.entries[name] = e;
  }
  return m;
}

}  // namespace minnow::quant
