// Weights repacked at load for the matmul kernels: the rows of a Q4_0/Q4_1/Q5_0/Q5_1/Q8_0 matrix
// in groups of 8 (the last group padded with zero rows), interleaved block by block, so
// one vector lane holds one row: a kernel reads a group's block once, multiplies it with
// 32 int8 activations and gets 8 row sums in one register, scaled by 8 row scales loaded
// as one vector; no per-row horizontal sums, no per-block scalar scale broadcasts.
//
// One group-block (32 columns of 8 rows), in this order:
//   d[8]   f16 row scales
//   m[8]   f16 row minimums (Q4_1, Q5_1)
//   h[32]  fifth bits (Q5_0, Q5_1): byte (r/4)*16 + (r%4)*4 + i holds row r's fifth bits
//          of elements 4i+e (bit e) and 16+4i+e (bit 4+e)
//   Q4/Q5: 4 x 32 bytes; byte 4r+e of chunk i holds row r's element 4i+e in its low
//          nibble and element 16+4i+e in its high nibble (the GGUF quant bits)
//   Q8_0:  8 x 32 bytes; byte 4r+e of chunk j is row r's element 4j+e (int8)
// so chunk j (Q8_0), or chunk j's low (j < 4) or high (j >= 4) nibbles (Q4/Q5), meets the
// activation bytes 4j..4j+3 broadcast to every lane.
#pragma once
#include <cstddef>
#include <cstdint>

#include "kernels/ops.hpp"

namespace minnow::kernels {

constexpr int64_t kPackRows = 8;

bool packable(DType t);                                    // Q4_0, Q4_1, Q5_0, Q5_1, Q8_0
size_t packed_group_block_bytes(DType t);                  // 144, 160, 176, 192, 272
size_t packed_bytes(DType t, int64_t rows, int64_t cols);  // whole matrix, rows padded to 8

// Writes w (unpacked, w.type packable) into dst (packed_bytes of it).
void pack_rows(const WeightView& w, uint8_t* dst);
// Dequantizes rows r0..r0+n-1 of a packed matrix into out (n x cols).
void dequantize_packed(const WeightView& w, int64_t r0, int64_t n, float* out);

}  // namespace minnow::kernels
