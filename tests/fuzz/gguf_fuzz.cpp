// libFuzzer harness for the GGUF reader: any input must parse or throw minnow::Error, and a
// parsed file must only describe memory inside the input. Not part of the CMake build:
//   clang++ -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -Isrc tests/fuzz/gguf_fuzz.cpp \
//     src/formats/gguf.cpp src/tensor/dtype.cpp src/base/mapped_file.cpp -o /tmp/gguf_fuzz
//   /tmp/gguf_fuzz -max_len=4096 -max_total_time=60 CORPUS_DIR
#include <cstdint>
#include <cstdlib>

#include "base/error.hpp"
#include "formats/gguf.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    auto f = minnow::GgufFile::parse(data, size);
    for (const auto& t : f->tensors())
      if (t.data < data || t.n_bytes > size || t.data + t.n_bytes > data + size) std::abort();
    for (const auto& [key, v] : f->metadata())
      if (v.type == minnow::GgufType::STRING &&
          (reinterpret_cast<const uint8_t*>(v.str.data()) < data ||
           reinterpret_cast<const uint8_t*>(v.str.data()) + v.str.size() > data + size))
        std::abort();
  } catch (const minnow::Error&) {
    // Rejected cleanly; any other exception escapes and libFuzzer reports it.
  }
  return 0;
}
