// Repacks a loaded model's Q4_0/Q4_1/Q8_0 matrices into the decode kernels' layout
// (kernels/packed.hpp), one buffer for all, and sets each view's `packed`.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>

#include "models/model.hpp"

namespace minnow {

// drop(p, n) is told each source range once it is copied: the loader lets the file's pages
// go, since nothing reads them again (a tied embedding looks its rows up in the copy).
void pack_weights(LoadedModel& m, const std::function<void(const uint8_t*, size_t)>& drop);

}  // namespace minnow
