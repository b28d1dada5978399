// The second-order side of GPTQ: from a matmul input's second-moment matrix H (the mean of
// x x^T over calibration tokens) to the factor quantize_row_gptq carries errors with.
#pragma once
#include <cstdint>
#include <vector>

#include "base/thread_pool.hpp"

namespace minnow::quant {

// U, upper triangular with U^T U = (H + damp I)^-1, n x n row-major, where damp is
// damp_fraction of H's mean diagonal (keeping columns the calibration never reached, and
// near-dependent ones, from blowing the errors up). Columns with a zero diagonal get damp
// alone. Computed as the Cholesky factor of H with rows and columns reversed (H = R R^T, R
// upper), then U = R^-1. Throws Error if H is not positive semi-definite enough to factor.
std::vector<float> gptq_factor(const std::vector<float>& h, int64_t n, double damp_fraction, ThreadPool& pool);

}  // namespace minnow::quant
