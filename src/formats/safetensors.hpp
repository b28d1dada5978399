// Hugging Face safetensors reader. Layout: u64 LE header length N, N bytes of JSON header
// ({"name": {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {str: str}}),
// then the data section that the offsets index. The header is untrusted: every field, size and
// offset is checked (overflow-safe) and problems are minnow::Error naming the tensor and what
// is wrong. Tensor data points into the mapping, never copied.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/mapped_file.hpp"
#include "tensor/dtype.hpp"

namespace minnow {

struct SafetensorsTensor {
  std::string name;
  std::string dtype;            // as written: "F32", "BF16", "I64", ...
  std::optional<DType> type;    // F32, F16, BF16; other dtypes are readable but not bindable
  std::vector<int64_t> shape;   // as stored, row-major (last dim fastest); {} is a scalar
  uint64_t n_elements = 0;
  uint64_t n_bytes = 0;
  uint64_t offset = 0;          // data_offsets[0], relative to the data section
  const uint8_t* data = nullptr;
};

// Bytes per element of a safetensors dtype string; nullopt for unknown (or sub-byte) dtypes.
std::optional<uint32_t> safetensors_dtype_size(std::string_view dtype);

// One .safetensors file. Rejected (beyond malformed JSON): a header over 100 MB, unknown or
// missing keys, more than 8 dims, ranges outside the data section or overlapping, a byte
// length that is not elements x element size, duplicate names, and data not aligned to its
// element size (relative to the image start; a mapping is page aligned). Gaps between
// tensors and trailing bytes are allowed.
class SafetensorsFile {
 public:
  static constexpr uint64_t kMaxHeaderBytes = 100u << 20;
  static constexpr size_t kMaxDims = 8;

  // Maps and parses path; errors are "PATH: safetensors: ...".
  static std::unique_ptr<SafetensorsFile> open(const std::string& path);
  // Parses an in-memory image (tests, fuzzers); `bytes` must outlive the result and should be
  // 8-byte aligned for the data pointers to be aligned.
  static std::unique_ptr<SafetensorsFile> parse(const uint8_t* bytes, size_t size);

  const std::vector<SafetensorsTensor>& tensors() const { return tensors_; }  // header order
  const SafetensorsTensor* find(std::string_view name) const;
  const std::map<std::string, std::string, std::less<>>& metadata() const { return metadata_; }
  const std::string& path() const { return path_; }  // empty for parse()

 private:
  SafetensorsFile() = default;
  void parse_image(const uint8_t* bytes, size_t size);

  std::unique_ptr<MappedFile> map_;
  std::string path_;
  std::vector<SafetensorsTensor> tensors_;
  std::map<std::string, size_t, std::less<>> index_;
  std::map<std::string, std::string, std::less<>> metadata_;
};

// The weights of a Hugging Face checkpoint directory: the shards that
// model.safetensors.index.json names in its weight_map, or else exactly model.safetensors
// (not every *.safetensors: repositories often hold others, e.g. consolidated.safetensors
// duplicating the shards). Every tensor a shard holds is included; names are unique across
// shards, and each weight_map entry must be found in the shard it names.
class SafetensorsCheckpoint {
 public:
  static constexpr uint64_t kMaxIndexBytes = 64u << 20;

  static std::unique_ptr<SafetensorsCheckpoint> open(const std::string& dir);

  const SafetensorsTensor* find(std::string_view name) const;
  std::vector<const SafetensorsTensor*> tensors() const;  // all, sorted by name
  size_t n_files() const { return files_.size(); }
  const SafetensorsFile& file(size_t i) const { return *files_[i]; }  // sorted by file name

 private:
  SafetensorsCheckpoint() = default;
  void add_file(std::unique_ptr<SafetensorsFile> f);

  struct Entry {
    const SafetensorsTensor* tensor;
    size_t file;  // index into files_
  };
  std::vector<std::unique_ptr<SafetensorsFile>> files_;
  std::map<std::string, Entry, std::less<>> index_;
};

}  // namespace minnow
