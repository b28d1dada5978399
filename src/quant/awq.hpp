// Activation-aware column scaling (AWQ: Lin et al., 2023, "AWQ: Activation-aware Weight
// Quantization for LLM Compression and Acceleration"), folded into the RMS norms.
//
// The matrices that read one norm's output (Q, K and V after attn_norm; gate and up after
// ffn_norm) get column j multiplied by s_j and the norm's weight j divided by it; ffn_down,
// which reads act(gate) * up, gets column j multiplied and up's row j divided. The model
// computes the same function, while columns that see large activations get a finer grid.
// s_j = a_j^(alpha/2) over the geometric mean of those, a_j the column's mean squared
// activation (the importance matrix). alpha is chosen per group from 0, 1/8, 1/4: the one
// with the least activation-weighted rounding error sum_j a_j (w_j - q_j / s_j)^2 over the
// group's matrices (on up to 256 rows of each). alpha = 0 is the unscaled model, so by this
// measure no group gets worse.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "base/thread_pool.hpp"
#include "quant/imatrix.hpp"
#include "quant/model_source.hpp"

namespace minnow::quant {

struct AwqGroup {
  std::string name;                       // what the scales fold into: "blk.3.attn_norm.weight", or
                                          // "blk.3.ffn_down.weight" (folded into ffn_up's rows)
  float alpha = 0;                        // 0: left unscaled
  double error = 0, unscaled_error = 0;   // the measure at alpha and at 0
};

struct AwqReport {
  std::vector<AwqGroup> groups;      // every group searched, in layer order
  std::vector<std::string> skipped;  // "blk.0.attn_norm.weight: why", for groups left alone
};

// Rewrites the tensors of the scaled groups in src (read_row scales; raw is dropped, so
// nothing of theirs is copied as stored) and their imatrix entries (the scaled inputs'
// importance, a_j / s_j^2). type_of(i): the type tensor i of src will be written as.
// Only layers with both attn_norm and ffn_norm (the sequential pre-norm block of Llama,
// Qwen and Gemma) are considered.
AwqReport apply_awq(ModelSource& src, Imatrix& imatrix, const std::function<DType(size_t)>& type_of,
                    ThreadPool& pool);

}  // namespace minnow::quant
