// Read-only memory mapping of a whole file (RAII). Weights are used in place from the map.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace minnow {

class MappedFile {
 public:
  explicit MappedFile(const std::string& path);  // throws Error naming the path and reason
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  std::span<const uint8_t> bytes() const { return {data_, size_}; }
  const std::string& path() const { return path_; }
  // Lets the kernel drop the whole pages of [p, p + n) (within the map) from this process's
  // memory; a later read maps them in again from the file. For data copied elsewhere.
  void drop_pages(const uint8_t* p, size_t n) const;

 private:
  std::string path_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace minnow
