// One function per quantized type, over whole blocks: the pieces quantize_row dispatches to.
// x holds n_blocks * block_size floats (finite); importance is nullptr or as many weights.
#pragma once
#include <cstdint>

#include "tensor/dtype.hpp"

namespace minnow::quant {

void quantize_q4_0(const float* x, uint8_t* dst, int64_t n_blocks, const float* importance);
void quantize_q4_1(const float* x, uint8_t* dst, int64_t n_blocks, const float* importance);
void quantize_q5_0(const float* x, uint8_t* dst, int64_t n_blocks, const float* importance);
void quantize_q5_1(const float* x, uint8_t* dst, int64_t n_blocks, const float* importance);
void quantize_q8_0(const float* x, uint8_t* dst, int64_t n_blocks, const float* importance);
void quantize_q4_k(const float* x, uint8_t* dst, int64_t n_blocks, const float* importance);
void quantize_q5_k(const float* x, uint8_t* dst, int64_t n_blocks, const float* importance);
void quantize_q6_k(const float* x, uint8_t* dst, int64_t n_blocks, const float* importance);

// The codes of one block, in the order of its values, written over those of a block already
// quantized (its scales stay): for GPTQ, which rounds each value against scales chosen
// earlier. Codes as the layout stores them: Q4_0, Q4_1, Q4_K in [0, 15]; Q5_0, Q5_1, Q5_K in
// [0, 31]; Q6_K in [0, 63]; Q8_0 in [-128, 127].
void set_codes_q4_0(uint8_t* block, const int* codes);
void set_codes_q4_1(uint8_t* block, const int* codes);
void set_codes_q5_0(uint8_t* block, const int* codes);
void set_codes_q5_1(uint8_t* block, const int* codes);
void set_codes_q8_0(uint8_t* block, const int* codes);
void set_codes_q4_k(uint8_t* block, const int* codes);
void set_codes_q5_k(uint8_t* block, const int* codes);
void set_codes_q6_k(uint8_t* block, const int* codes);

// A quantized type's writer side: its block quantizer, its code setter and the code range.
struct BlockCodec {
  void (*quantize)(const float* x, uint8_t* dst, int64_t n_blocks, const float* importance);
  void (*set_codes)(uint8_t* block, const int* codes);
  int code_min, code_max;
};
// nullptr for a type without blocks to quantize (F32, F16, BF16, or one minnow cannot write).
const BlockCodec* block_codec(DType t);

}  // namespace minnow::quant
