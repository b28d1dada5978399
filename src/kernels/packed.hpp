// Weights repacked at load for the matmul kernels: the rows of a Q4_0/Q4_1/Q5_0/Q5_1/Q8_0/
// Q4_K/Q5_K/Q6_K matrix in groups of 8 (the last group padded with zero rows), interleaved block by block, so
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
//
// K-quants keep their 256-column super-blocks: one group-superblock (8 rows x 256) is
//   Q4_K/Q5_K: d[8] f16, dmin[8] f16, sc[8 sub-blocks][8 rows] u8, mn[8][8] u8 (the 6-bit
//              scales and minimums, unpacked), then per 32-column sub-block: Q5_K's fifth
//              bits (32 bytes, as h above) and the nibbles (128 bytes, as Q4 above);
//              x = d * sc * q - dmin * mn
//   Q6_K:      d[8] f16, sc[16 halves of 16 columns][8 rows] int8, then per sub-block:
//              bit 4 and bit 5 planes (32 bytes each, as h above) and the low nibbles;
//              x = d * sc * (q - 32)
// so a K sub-block is a Q4_1/Q5 block whose scales come from the super-block's, exactly.
#pragma once
#include <cstddef>
#include <cstdint>

#include "kernels/ops.hpp"

namespace minnow::kernels {

constexpr int64_t kPackRows = 8;
// The layout's name and version, as `minnow pack` files record them (docs/pack.md). Every
// kernel table (scalar, AVX2, AVX2+VNNI, NEON, dotprod, i8mm) reads this one layout, so a
// packed file serves every CPU; a table that needed another layout would get another name.
constexpr const char* kPackedLayoutName = "rows8";
constexpr int64_t kPackedLayoutVersion = 1;
constexpr uint64_t kPackedAlignment = 64;  // a packed file's tensor data: cache-line aligned

bool packable(DType t);                                    // Q4_0..Q8_0, Q4_K, Q5_K, Q6_K
size_t packed_group_bytes(DType t, int64_t cols);          // one group of 8 rows
size_t packed_bytes(DType t, int64_t rows, int64_t cols);  // whole matrix, rows padded to 8

// Writes w (unpacked, w.type packable) into dst (packed_bytes of it).
void pack_rows(const WeightView& w, uint8_t* dst);
// Dequantizes rows r0..r0+n-1 of a packed matrix into out (n x cols).
void dequantize_packed(const WeightView& w, int64_t r0, int64_t n, float* out);

}  // namespace minnow::kernels
