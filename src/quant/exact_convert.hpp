// Requantizing without loss where the target's grid holds the source's: a tensor stored as
// Q4_K and written as Q5_K keeps every value (Q5_K is Q4_K with one more bit per code), so
// it is converted block by block instead of searched for again. Exact: zero error, whatever
// the importance weights, so also the best any search could give.
#pragma once
#include <cstdint>

#include "tensor/dtype.hpp"

namespace minnow::quant {

// True where every block of `from` has a block of `to` with the same values: the same
// type, Q4_0 -> Q4_1 / Q5_0 / Q5_1 / Q8_0, Q5_0 -> Q5_1 / Q8_0, Q4_1 -> Q5_1, Q4_K -> Q5_K.
// (Float targets need no help: they hold any float type's values already.)
bool converts_exactly(DType from, DType to);

// n_blocks blocks of `from` at src as blocks of `to` at dst (converts_exactly(from, to)).
// False where a block cannot be (a Q4_0 scale so large that the Q4_1 minimum, -8 d,
// overflows f16): dst is then unspecified.
bool convert_exactly(DType from, DType to, const uint8_t* src, uint8_t* dst, int64_t n_blocks);

}  // namespace minnow::quant
