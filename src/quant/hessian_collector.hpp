// The MatmulObserver behind `minnow quantize --gptq`: for every matmul input (Q, K and V
// share one, as do gate and up), the sum of x x^T over the calibration tokens; for the output
// head only its diagonal (an importance vector, as minnow imatrix gives).
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/thread_pool.hpp"
#include "models/matmul_observer.hpp"
#include "models/model.hpp"
#include "quant/matmul_sites.hpp"

namespace minnow::quant {

// One input's second moments over `rows` tokens: h = mean of x x^T (n x n, row-major;
// empty for the head) and its diagonal, the mean squared activation of each column.
struct SecondMoments {
  int64_t n = 0, rows = 0;
  std::vector<float> h, diag;
};

// h (cols x cols, row-major) += x^T x over the rows of x, upper triangle (j >= i) only.
// scratch: reused between calls. Runs parallel loops on pool.
void add_second_moments(const float* x, int rows, int64_t cols, float* h, std::vector<float>& scratch, ThreadPool& pool);

class HessianCollector : public MatmulObserver {
 public:
  // observe() runs parallel loops on pool: the forward pass calls it between its own.
  HessianCollector(const LoadedModel& m, ThreadPool& pool);
  void observe(int layer, MatmulSite site, const float* x, int rows, int64_t cols) override;
  // Per weight name (the matrices sharing an input share one object), as means. Ends the
  // collection.
  std::map<std::string, std::shared_ptr<SecondMoments>> take();

 private:
  struct Sums {
    std::shared_ptr<SecondMoments> m;  // h summed (upper triangle) until take()
    std::vector<double> diag;          // the head's squared sums
  };
  ThreadPool& pool_;
  MatmulSites sites_;
  std::vector<Sums> sums_;  // per site
  std::vector<float> xt_;   // add_second_moments' scratch
};

}  // namespace minnow::quant
