// minnow pack: a GGUF whose matrices the decode kernels read (those the loader would copy
// into kernels/packed.hpp's layout) are stored in that layout already, so loading it maps
// them read-only and copies nothing (docs/pack.md). Everything else is copied as is.
#pragma once
#include <cstdint>
#include <string>

namespace minnow {

struct PackStats {
  size_t n_tensors = 0, n_packed = 0;
  uint64_t in_bytes = 0, out_bytes = 0;  // file sizes
};

// Reads the GGUF at in (refusing a file already packed), writes out (through out.tmp,
// renamed at the end); throws Error naming the problem.
PackStats write_packed_gguf(const std::string& in, const std::string& out);

}  // namespace minnow
