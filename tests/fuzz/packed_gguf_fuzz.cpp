// minnow pack files: any input must parse and pass check_packed_gguf or throw
// minnow::Error; a packed tensor that passes must lie inside the input, and its first and
// last rows must dequantize from the bytes it owns (what the kernels read).
#include <vector>

#include "base/error.hpp"
#include "formats/gguf.hpp"
#include "fuzz_target.hpp"
#include "kernels/packed.hpp"
#include "models/packed_gguf.hpp"

MINNOW_FUZZ_TARGET(packed_gguf) {
  using minnow::fuzz::fuzz_check;
  try {
    auto f = minnow::GgufFile::parse(data, size);
    minnow::check_packed_gguf(*f);
    for (const auto& t : f->tensors()) {
      if (!t.packed) continue;
      fuzz_check(t.data >= data && t.n_bytes <= size && t.data + t.n_bytes <= data + size, "packed tensor outside the input");
      const int64_t cols = t.dims[0], rows = t.dims[1];
      fuzz_check(t.n_bytes == minnow::kernels::packed_bytes(t.type, rows, cols), "packed tensor size unchecked");
      if (cols > (1 << 16)) continue;  // bytes in the input bound rows, not cols alone
      minnow::kernels::WeightView w{t.type, t.data, rows, cols, 0, t.data};
      std::vector<float> row(static_cast<size_t>(cols));
      minnow::kernels::dequantize_packed(w, 0, 1, row.data());
      minnow::kernels::dequantize_packed(w, rows - 1, 1, row.data());
    }
  } catch (const minnow::Error&) {
    // Rejected cleanly.
  }
}
