// What a `minnow pack` file promises (docs/pack.md), checked before any tensor is used:
// its packed tensors are in the layout this build's kernels read (name and version in
// minnow.pack.layout / minnow.pack.version), sized as kernels::packed_bytes says, and
// aligned for the kernels. A plain GGUF has neither packed tensors nor these keys.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "formats/gguf.hpp"

namespace minnow {

inline constexpr const char* kPackLayoutKey = "minnow.pack.layout";
inline constexpr const char* kPackVersionKey = "minnow.pack.version";

struct PackInfo {
  std::string layout;  // empty: not a packed file
  int64_t version = 0;
  size_t n_packed = 0;  // tensors stored packed
};

// Throws Error with a one-line reason when f is packed for another layout or version, or
// its packed tensors are inconsistent; returns what it found.
PackInfo check_packed_gguf(const GgufFile& f);

}  // namespace minnow
