// safetensors reader: any input must parse or throw minnow::Error, and a parsed file must only
// describe memory inside the input, with consistent sizes and no overlapping tensors.
#include <algorithm>
#include <vector>

#include "base/error.hpp"
#include "formats/safetensors.hpp"
#include "fuzz_target.hpp"

MINNOW_FUZZ_TARGET(safetensors) {
  using minnow::fuzz::fuzz_check;
  try {
    auto f = minnow::SafetensorsFile::parse(data, size);
    std::vector<std::pair<const uint8_t*, uint64_t>> ranges;
    for (const auto& t : f->tensors()) {
      fuzz_check(t.data >= data && t.n_bytes <= size && t.data + t.n_bytes <= data + size, "tensor data outside the input");
      auto elem = minnow::safetensors_dtype_size(t.dtype);
      fuzz_check(elem && t.n_bytes == t.n_elements * *elem, "byte size disagrees with dtype and elements");
      fuzz_check(t.shape.size() <= minnow::SafetensorsFile::kMaxDims, "too many dims");
      fuzz_check(f->find(t.name) == &t, "find() does not return the tensor");
      if (t.n_bytes) ranges.emplace_back(t.data, t.n_bytes);
    }
    std::sort(ranges.begin(), ranges.end());
    for (size_t k = 1; k < ranges.size(); ++k)
      fuzz_check(ranges[k - 1].first + ranges[k - 1].second <= ranges[k].first, "tensors overlap");
  } catch (const minnow::Error&) {
    // Rejected cleanly.
  }
}
