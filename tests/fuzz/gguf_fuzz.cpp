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
    auto inside = [&](std::string_view s) {
      const auto* p = reinterpret_cast<const uint8_t*>(s.data());
      return s.empty() || (p >= data && p + s.size() <= data + size);
    };
    for (const auto& [key, v] : f->metadata()) {
      fuzz_check(inside(v.str), "metadata string outside the input");
      fuzz_check(inside(v.bytes), "metadata array outside the input");
      // Arrays were checked when parsed: decoding them must not throw.
      for (const auto& e : v.elements()) fuzz_check(inside(e.str) && inside(e.bytes), "array element outside the input");
      for (std::string_view s : v.strings()) fuzz_check(inside(s), "array string outside the input");
      v.ints(), v.floats();
    }
  } catch (const minnow::Error&) {
    // Rejected cleanly.
  }
}
