// Packed-row kernels for armv8.2-a dotprod CPUs (sdot); compiled with +dotprod, reached
// only when HWCAP says the CPU has it.
#include "kernels/arm/packed_neon.hpp"

namespace minnow::kernels {
MINNOW_DEFINE_PACKED_KERNELS(dotprod, OneTokenAtATime<SdotDot>)
}  // namespace minnow::kernels
