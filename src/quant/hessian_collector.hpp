// The MatmulObserver behind `minnow quantize --gptq`: for every matmul input (Q, K and V
// share one, as do gate and up), the sum of x x^T over the calibration tokens, and for the
// output head only the diagonal (an importance vector as minnow imatrix gives).
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/thread_pool.hpp"
#include "models/matmul_observer.hpp"
#include "models/model.hpp"

namespace minnow::quant {

// One input's second moments: h = mean of x x^T over `rows` tokens, n x n row-major.
struct SecondMoments {
  int64_t n = 0, rows = 0;
  std::vector<float> h;
};

// h (cols x cols, row-major) += x^T x over the rows of x, upper triangle (j >= i) only.
// scratch: reused between calls.
void add_second_moments(const float* x, int rows, int64_t cols, float* h, std::vector<float>& scratch, ThreadPool& pool);

class HessianCollector : public MatmulObserver {
 public:
  HessianCollector(const LoadedModel& m, ThreadPool& pool);
  void observe(int layer, MatmulSite site, const float* x, int rows, int64_t cols) override;
  // Per weight name (the matrices sharing an input share one object), normalized to means.
  // The head's entry holds only its diagonal in h (n values). Ends the collection.
  std::map<std::string, std::shared_ptr<SecondMoments>> take();

 private:
  struct Site {
    std::vector<std::string> names;
    std::shared_ptr<SecondMoments> m;
    std::vector<double> diag;  // the head: squared sums only
  };
  ThreadPool& pool_;
  std::vector<Site> sites_;
  std::vector<float> xt_;  // the input transposed: one column per row, contiguous
  int n_layers_;
};

}  // namespace minnow::quant
