// Packed-row kernels for armv8.6-a i8mm CPUs: smmla for every 15-bit token (its hi and lo
// bytes as the two columns) and for pairs of int8 tokens, sdot for a lone int8 one;
// compiled with +i8mm, reached only when HWCAP says the CPU has it.
#include "kernels/arm/packed_neon.hpp"

namespace minnow::kernels {
MINNOW_DEFINE_PACKED_KERNELS(i8mm, MmlaDot)
}  // namespace minnow::kernels
