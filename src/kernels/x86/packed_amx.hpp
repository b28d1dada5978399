// The AMX tile products of packed_amx.cpp (KernelTable::tiles of the "avx512+amx" table).
#pragma once
#include "kernels/ops.hpp"

namespace minnow::kernels {

const PackedTiles& packed_tiles_amx();

}  // namespace minnow::kernels
