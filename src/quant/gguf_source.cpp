// A GGUF file as a quantization source: every tensor dequantized row by row, every
// metadata key copied as it is.
#include <filesystem>

#include "base/error.hpp"
#include "formats/gguf.hpp"
#include "quant/model_source.hpp"

namespace minnow::quant {
namespace {

// Keys the quantizer owns in its output.
bool owned_by_quantizer(const std::string& key) {
  return key == "general.alignment" || key == "general.file_type" || key == "general.quantization_version";
}

}  // namespace

std::unique_ptr<ModelSource> open_gguf_source(const std::string& path) {
  std::shared_ptr<GgufFile> file = GgufFile::open(path);
  auto src = std::make_unique<ModelSource>();
  src->format = "gguf";
  src->storage = file;
  src->file_bytes = file->file_size();
  if (auto arch = file->get_string("general.architecture"))
    src->n_layers = static_cast<int>(file->get_int(std::string(*arch) + ".block_count").value_or(0));
  src->tied_output = file->find_tensor("output.weight") == nullptr;
  for (const GgufTensor& t : file->tensors()) {
    const DTypeTraits& tr = dtype_traits(t.type);
    if (!tr.dequantize)
      throw Error(path + ": tensor '" + t.name + "' is " + tr.name + ", which minnow cannot read yet");
    SourceTensor s;
    s.name = t.name;
    s.dims = t.dims;
    s.type_name = tr.name;
    s.n_elements = t.n_elements;
    s.n_bytes = t.n_bytes;
    s.raw = t.data;
    s.type = t.type;
    const uint64_t row_bytes = *dtype_bytes(t.type, static_cast<uint64_t>(t.dims[0]));
    const int64_t blocks = t.dims[0] / tr.block_size;
    const uint8_t* data = t.data;
    const DequantizeFn deq = tr.dequantize;
    s.read_row = [data, row_bytes, blocks, deq](int64_t row, float* out) {
      deq(data + static_cast<uint64_t>(row) * row_bytes, out, blocks);
    };
    src->tensors.push_back(std::move(s));
  }
  const GgufFile* f = file.get();
  src->write_metadata = [f](GgufWriter& w) {
    for (const auto& [key, value] : f->metadata())
      if (!owned_by_quantizer(key)) w.set_value(key, value);
  };
  return src;
}

std::unique_ptr<ModelSource> open_model_source(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return open_hf_source(path);
  if (!std::filesystem::exists(path, ec)) throw Error("cannot open '" + path + "': no such file or directory");
  return open_gguf_source(path);
}

}  // namespace minnow::quant
