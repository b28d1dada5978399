// An importance matrix: per weight matrix, per input column, the sum of the squared
// activations seen there and how many rows (tokens) were summed. quantize divides one by
// the other to weight each column's rounding error. Files are llama.cpp's: the GGUF form
// (`<name>.in_sum2`, `<name>.counts`, `imatrix.*` keys; written and read) and the legacy
// `.dat` form of llama-imatrix (read only).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace minnow::quant {

struct ImatrixEntry {
  std::vector<float> sum2;    // n_mat x cols (n_mat is 1 for every matrix minnow runs)
  std::vector<float> counts;  // n_mat: rows summed into each matrix's columns
};

struct Imatrix {
  std::map<std::string, ImatrixEntry> entries;  // by weight name ("blk.0.attn_q.weight")
  std::vector<std::string> datasets;            // calibration files
  int32_t chunk_count = 0, chunk_size = 0;

  // sum2 / count per column (the mean squared activation); empty when the entry is missing
  // or saw no rows.
  std::vector<float> importance(const std::string& name) const;
};

// The GGUF form, through PATH.tmp (nothing at path on failure). Throws Error.
void write_imatrix(const Imatrix& m, const std::string& path);
// Either form, told apart by the GGUF magic. Throws Error naming the path and the problem.
Imatrix read_imatrix(const std::string& path);

}  // namespace minnow::quant
