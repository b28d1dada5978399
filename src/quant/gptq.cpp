#include "quant/gptq.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "base/error.hpp"

namespace minnow::quant {

std::vector<float> gptq_factor(const std::vector<float>& h, int64_t n, double damp_fraction, ThreadPool& pool) {
  const auto N = static_cast<size_t>(n);
  double mean_diag = 0;
  for (int64_t i = 0; i < n; ++i) mean_diag += h[static_cast<size_t>(i) * N + static_cast<size_t>(i)];
  mean_diag /= static_cast<double>(n);
  const double damp = damp_fraction * (mean_diag > 0 ? mean_diag : 1.0);
  // a = H reversed (a[i][j] = H[n-1-i][n-1-j]), then its lower Cholesky factor in place.
  std::vector<double> a(N * N);
  for (size_t i = 0; i < N; ++i)
    for (size_t j = 0; j < N; ++j) a[i * N + j] = h[(N - 1 - i) * N + (N - 1 - j)];
  for (size_t i = 0; i < N; ++i) a[i * N + i] += damp;
  for (size_t j = 0; j < N; ++j) {
    double* rj = &a[j * N];
    double d = rj[j];
    for (size_t k = 0; k < j; ++k) d -= rj[k] * rj[k];
    if (!(d > 0))
      throw Error("gptq: the calibration second moments are not positive definite at column " + std::to_string(N - 1 - j));
    d = std::sqrt(d);
    rj[j] = d;
    const double inv = 1.0 / d;
    // Rows below j: each a dot product with row j over the columns before j.
    const int64_t below = n - static_cast<int64_t>(j) - 1;
    const int64_t per_task = 64;
    pool.parallel_for((below + per_task - 1) / per_task, [&](int64_t t, int) {
      const size_t end = std::min(N, j + 1 + static_cast<size_t>((t + 1) * per_task));
      for (size_t i = j + 1 + static_cast<size_t>(t * per_task); i < end; ++i) {
        double* ri = &a[i * N];
        double s = ri[j];
        for (size_t k = 0; k < j; ++k) s -= ri[k] * rj[k];
        ri[j] = s * inv;
      }
    });
  }
  // R = a reversed (upper), H = R R^T; U = R^-1, upper, row by row from the bottom:
  // U[i][i] = 1 / R[i][i], U[i][j] = -(1 / R[i][i]) sum_{i<m<=j} R[i][m] U[m][j].
  auto r = [&](size_t i, size_t j) { return a[(N - 1 - i) * N + (N - 1 - j)]; };
  std::vector<double> u(N * N, 0.0);
  for (size_t ii = N; ii-- > 0;) {
    double* ui = &u[ii * N];
    const double inv = 1.0 / r(ii, ii);
    // Over column slices, each summing the rows m it reaches.
    const size_t per_task = 256;
    const size_t first = ii + 1;
    pool.parallel_for(static_cast<int64_t>((N - first + per_task - 1) / per_task), [&](int64_t t, int) {
      const size_t c0 = first + static_cast<size_t>(t) * per_task, c1 = std::min(N, c0 + per_task);
      for (size_t m = first; m < c1; ++m) {
        const double c = r(ii, m);
        if (c == 0) continue;
        const double* um = &u[m * N];
        for (size_t j = std::max(m, c0); j < c1; ++j) ui[j] -= c * um[j];
      }
      for (size_t j = c0; j < c1; ++j) ui[j] *= inv;
    });
    ui[ii] = inv;
  }
  return std::vector<float>(u.begin(), u.end());
}

}  // namespace minnow::quant
