// The MatmulObserver behind `minnow imatrix`: sums each matmul input's squared values per
// column under the GGUF names of the weights it feeds (Q, K and V get the same sums).
#pragma once
#include <string>
#include <vector>

#include "models/matmul_observer.hpp"
#include "models/model.hpp"
#include "quant/imatrix.hpp"
#include "quant/matmul_sites.hpp"

namespace minnow::quant {

class ImatrixCollector : public MatmulObserver {
 public:
  explicit ImatrixCollector(const LoadedModel& m);
  void observe(int layer, MatmulSite site, const float* x, int rows, int64_t cols) override;
  // The sums so far (f32, as the file stores them), without datasets or chunk facts.
  Imatrix result() const;

 private:
  struct Sums {
    std::vector<double> sum2;  // double: millions of tokens summed in f32 would lose the small ones
    int64_t rows = 0;
  };
  MatmulSites sites_;
  std::vector<Sums> sums_;  // per site
};

}  // namespace minnow::quant
