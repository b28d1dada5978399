// GGUF reader (versions 2 and 3). The file is untrusted: every count, length, offset and
// size is checked against the file size with overflow-safe arithmetic, and problems are
// reported as minnow::Error naming what is wrong. Strings and tensor data point into the map.
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

enum class GgufType : uint32_t {
  U8 = 0, I8 = 1, U16 = 2, I16 = 3, U32 = 4, I32 = 5, F32 = 6, BOOL = 7,
  STRING = 8, ARRAY = 9, U64 = 10, I64 = 11, F64 = 12,
};
const char* gguf_type_name(GgufType t);

struct GgufValue {
  GgufType type = GgufType::U8;
  uint64_t u = 0;           // unsigned integers and bool
  int64_t i = 0;            // signed integers
  double f = 0;             // floats
  std::string_view str;     // STRING (points into the mapped file)
  // ARRAY: element type, count and the elements' encoded bytes (in the mapped file). The
  // elements are checked when the file is parsed but decoded only when asked for: a 150k
  // vocabulary's three arrays cost nothing until read.
  GgufType elem_type = GgufType::U8;
  uint64_t count = 0;
  std::string_view bytes;

  bool is_integer() const;
  // Numeric value as int64 / double, or nullopt if not numeric or out of range.
  std::optional<int64_t> as_int() const;
  std::optional<double> as_float() const;

  // ARRAY: its elements decoded. Empty for any other type; the typed forms also for
  // elements of another type (strings(): STRING; ints(): an integer type; floats(): F32/F64).
  std::vector<GgufValue> elements() const;
  std::vector<std::string_view> strings() const;
  std::vector<int64_t> ints() const;
  std::vector<double> floats() const;
};

struct GgufTensor {
  std::string name;
  std::vector<int64_t> dims;  // dims[0] is the fastest-varying (row length)
  DType type;
  uint64_t offset = 0;        // relative to the start of the data section
  uint64_t n_elements = 0;
  uint64_t n_bytes = 0;
  const uint8_t* data = nullptr;
  bool packed = false;        // a packed type id (tensor/packed_types.hpp): kernels/packed.hpp's layout
};

class GgufFile {
 public:
  // Maps and parses path; throws Error("gguf: ...") on any problem.
  static std::unique_ptr<GgufFile> open(const std::string& path);
  // Parses an in-memory image (used by tests and fuzzers); `bytes` must outlive the result.
  static std::unique_ptr<GgufFile> parse(const uint8_t* bytes, size_t size);

  uint32_t version() const { return version_; }
  uint64_t alignment() const { return alignment_; }
  const std::map<std::string, GgufValue, std::less<>>& metadata() const { return kv_; }
  const std::vector<GgufTensor>& tensors() const { return tensors_; }
  size_t file_size() const { return size_; }
  // See MappedFile::drop_pages (no-op for parsed in-memory images).
  void drop_pages(const uint8_t* p, size_t n) const {
    if (map_) map_->drop_pages(p, n);
  }

  // Frees the parsed metadata once a loader has read what it needs; tensors and the map stay.
  void release_metadata() { decltype(kv_)().swap(kv_); }

  const GgufValue* find(std::string_view key) const;
  const GgufTensor* find_tensor(std::string_view name) const;

  // Typed metadata lookups; throw Error naming the key when present with the wrong type.
  std::optional<int64_t> get_int(std::string_view key) const;
  std::optional<double> get_float(std::string_view key) const;
  std::optional<std::string_view> get_string(std::string_view key) const;
  std::optional<bool> get_bool(std::string_view key) const;
  // The array value (decode it with strings(), ints(), ...); throws unless its elements are `elem`.
  const GgufValue* get_array(std::string_view key, GgufType elem) const;

 private:
  GgufFile() = default;
  void parse_image(const uint8_t* bytes, size_t size);

  std::unique_ptr<MappedFile> map_;
  size_t size_ = 0;
  uint32_t version_ = 0;
  uint64_t alignment_ = 32;
  std::map<std::string, GgufValue, std::less<>> kv_;
  std::vector<GgufTensor> tensors_;
  std::map<std::string, size_t, std::less<>> tensor_index_;
};

}  // namespace minnow
