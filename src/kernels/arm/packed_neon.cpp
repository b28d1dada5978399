// Packed-row kernels for every aarch64 CPU (armv8.0-a NEON: widening multiplies).
#include "kernels/arm/packed_neon.hpp"

namespace minnow::kernels {
MINNOW_DEFINE_PACKED_KERNELS(neon, OneTokenAtATime<WideningDot>)
}  // namespace minnow::kernels
