// GGUF reader: any input must parse or throw minnow::Error, and a parsed file must only
// describe memory inside the input.
#include "base/error.hpp"
#include "formats/gguf.hpp"
#include "fuzz_target.hpp"

MINNOW_FUZZ_TARGET(gguf) {
  using minnow::fuzz::fuzz_check;
  try {
    auto f = minnow::GgufFile::parse(data, size);
    for (const auto& t : f->tensors())
      fuzz_check(t.data >= data && t.n_bytes <= size && t.data + t.n_bytes <= data + size, "tensor data outside the input");
    for (const auto& [key, v] : f->metadata()) {
      if (v.type != minnow::GgufType::STRING) continue;
      const auto* p = reinterpret_cast<const uint8_t*>(v.str.data());
      fuzz_check(p >= data && p + v.str.size() <= data + size, "metadata string outside the input");
    }
  } catch (const minnow::Error&) {
    // Rejected cleanly.
  }
}
