// GGUF writer (version 3): metadata of every GGUF type, tensor infos, aligned data.
// The file is written as PATH.tmp and renamed to PATH only by finish(), so a failure (or
// an exception unwinding past the writer) never leaves a half-written PATH behind.
//
// Use: set metadata (set_* replaces a key already set, keeping its position), add every
// tensor's info, then begin_data() and write each tensor's bytes in the order added.
#pragma once
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "formats/gguf.hpp"
#include "tensor/dtype.hpp"

namespace minnow {

class GgufWriter {
 public:
  explicit GgufWriter(std::string path);  // nothing is created until begin_data()
  ~GgufWriter();                          // removes PATH.tmp unless finish() succeeded
  GgufWriter(const GgufWriter&) = delete;
  GgufWriter& operator=(const GgufWriter&) = delete;

  // Scalars.
  void set_u8(std::string_view key, uint8_t v);
  void set_i8(std::string_view key, int8_t v);
  void set_u16(std::string_view key, uint16_t v);
  void set_i16(std::string_view key, int16_t v);
  void set_u32(std::string_view key, uint32_t v);
  void set_i32(std::string_view key, int32_t v);
  void set_u64(std::string_view key, uint64_t v);
  void set_i64(std::string_view key, int64_t v);
  void set_f32(std::string_view key, float v);
  void set_f64(std::string_view key, double v);
  void set_bool(std::string_view key, bool v);
  void set_string(std::string_view key, std::string_view v);
  // Arrays.
  void set_strings(std::string_view key, std::span<const std::string> v);
  void set_i32s(std::string_view key, std::span<const int32_t> v);
  void set_f32s(std::string_view key, std::span<const float> v);
  // Any value read from another GGUF file (arrays of any depth included), bit for bit.
  void set_value(std::string_view key, const GgufValue& v);
  bool has(std::string_view key) const;
  void remove(std::string_view key);

  // general.alignment: a power of two; also written as metadata when not 32 (the default).
  void set_alignment(uint32_t alignment);

  // dims[0] is the row length (fastest-varying), as GGUF orders them. Returns the index.
  size_t add_tensor(std::string name, std::vector<int64_t> dims, DType type);
  // A matrix (dims {cols, rows}) of a packable type stored in kernels/packed.hpp's layout,
  // under its packed type id (tensor/packed_types.hpp); its bytes are the packed ones.
  size_t add_packed_tensor(std::string name, std::vector<int64_t> dims, DType type);
  uint64_t tensor_bytes(size_t index) const { return tensors_.at(index).n_bytes; }
  uint64_t data_bytes() const { return data_size_; }  // the data section, padding included

  // Creates PATH.tmp and writes header, metadata and tensor infos.
  void begin_data();
  // The bytes of the next tensor (in add_tensor order); exactly tensor_bytes(i) in all,
  // in as many calls as wanted.
  void write_tensor_data(const void* data, size_t n);
  // Checks every tensor got its bytes, flushes, closes and renames PATH.tmp to PATH.
  void finish();

 private:
  struct TensorInfo {
    std::string name;
    std::vector<int64_t> dims;
    uint32_t type_id;  // a DType, or a packed type id
    uint64_t offset = 0, n_bytes = 0;
  };
  size_t place(TensorInfo t);  // gives t its offset in the data section and appends it
  std::vector<uint8_t>& slot(std::string_view key, GgufType type);
  void write(const void* p, size_t n);
  void pad_to(uint64_t alignment);
  [[noreturn]] void fail_io(const std::string& what);

  std::string path_, tmp_path_;
  uint32_t alignment_ = 32;
  std::vector<std::pair<std::string, std::vector<uint8_t>>> kv_;  // key -> encoded type + value
  std::vector<TensorInfo> tensors_;
  uint64_t data_size_ = 0;
  std::FILE* file_ = nullptr;
  uint64_t written_ = 0;        // bytes written to the file so far
  uint64_t data_start_ = 0;     // file offset of the data section
  size_t current_ = 0;          // tensor being written
  uint64_t current_done_ = 0;   // its bytes written so far
  bool created_ = false;        // PATH.tmp exists (and is ours to remove)
  bool finished_ = false;
};

}  // namespace minnow
