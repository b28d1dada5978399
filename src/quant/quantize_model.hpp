// The whole-model step behind `minnow quantize`: each tensor of a source read as f32 rows,
// given its type by a Plan, quantized on a thread pool and written to a GGUF file.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "base/thread_pool.hpp"
#include "quant/hessian_collector.hpp"
#include "quant/imatrix.hpp"
#include "quant/model_source.hpp"
#include "quant/recipe.hpp"

namespace minnow::quant {

struct Progress {
  size_t tensor_index = 0, n_tensors = 0;
  const std::string* name = nullptr;
  DType type = DType::F32;
  uint64_t done_elements = 0, total_elements = 0;  // over the whole model
};

struct QuantizeReport {
  uint64_t in_bytes = 0, out_bytes = 0;             // tensor data
  uint64_t out_file_bytes = 0, n_elements = 0;
  std::map<std::string, int> type_counts;           // "Q4_K" -> number of tensors
  double seconds = 0;
};

struct QuantizeCallbacks {
  std::function<void(const Progress&)> progress;   // after each chunk of rows (main thread)
  std::function<void(const std::string&)> note;    // a tensor not at the plan's base type, and why
};

// Writes `out` (through OUT.tmp: nothing at `out` on failure). Throws Error naming the
// tensor on a problem (NaN in a weight, a value out of a type's range, I/O).
// imatrix (optional): each tensor's rounding error is weighted by its entry's mean squared
// activations. An entry naming no tensor of the source, or of another row length, is an
// Error; a quantized matrix without an entry is quantized unweighted, and cb.note says so.
// gptq (optional): per weight name, its input's second moments (HessianCollector); the
// matrices with an n x n entry are quantized by GPTQ (quantize_row_gptq), with importance
// from the imatrix as given (make it from the same moments' diagonals).
struct GptqOptions {
  std::map<std::string, std::shared_ptr<SecondMoments>> moments;
  double damp = 0.1;  // of the mean diagonal, added to the diagonal
};
QuantizeReport quantize_model(const ModelSource& src, const Plan& plan, const std::string& out, ThreadPool& pool,
                              const QuantizeCallbacks& cb, const Imatrix* imatrix = nullptr,
                              const GptqOptions* gptq = nullptr);

}  // namespace minnow::quant
