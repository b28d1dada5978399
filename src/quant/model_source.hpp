// What `minnow quantize` reads: a model's tensors under their GGUF (llama.cpp) names, each
// readable row by row as f32, plus the GGUF metadata the output should carry. Two
// sources: a GGUF file (any type minnow reads: dequantized) and a Hugging Face checkpoint
// directory (F32/F16/BF16 safetensors, converted to GGUF names and metadata).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "formats/gguf_writer.hpp"
#include "tensor/dtype.hpp"

namespace minnow::quant {

struct SourceTensor {
  std::string name;            // GGUF name
  std::vector<int64_t> dims;   // dims[0] is the row length
  std::string type_name;       // the stored type, for the log
  uint64_t n_elements = 0, n_bytes = 0;
  // The stored blocks, rows one after another (GGUF sources; null for others), in `type`:
  // written as they are where the output's type holds them exactly (exact_convert.hpp).
  const uint8_t* raw = nullptr;
  DType type = DType::F32;
  // Writes row `row` (dims[0] floats) to out. Safe to call from several threads at once.
  std::function<void(int64_t row, float* out)> read_row;
  int64_t rows() const { return dims[0] ? static_cast<int64_t>(n_elements / static_cast<uint64_t>(dims[0])) : 0; }
};

struct ModelSource {
  std::string format;                 // "gguf" or "safetensors"
  std::vector<SourceTensor> tensors;  // in the order they are written
  int n_layers = 0;
  bool tied_output = false;           // no output.weight: token_embd is the head
  uint64_t file_bytes = 0;            // size of the input on disk
  // Sets the output's metadata (everything but general.file_type, alignment and
  // quantization version, which the quantizer sets).
  std::function<void(GgufWriter&)> write_metadata;
  std::shared_ptr<const void> storage;  // keeps the mapped input alive
};

// Throws Error naming the path and the problem (a tensor type minnow cannot read, ...).
std::unique_ptr<ModelSource> open_gguf_source(const std::string& path);
std::unique_ptr<ModelSource> open_hf_source(const std::string& dir);
// A directory is read as a Hugging Face checkpoint, anything else as GGUF.
std::unique_ptr<ModelSource> open_model_source(const std::string& path);

}  // namespace minnow::quant
