// One function per quantized type, over whole blocks: the pieces quantize_row dispatches to.
// x holds n_blocks * block_size floats (finite); importance is nullptr or as many weights.
#pragma once
#include <cstdint>

namespace minnow::quant {

void quantize_q4_0(const float* x, uint8_t* dst, int64_t n_blocks, const float* importance);
void quantize_q4_1(const float* x, uint8_t* dst, int64_t n_blocks, const float* importance);
void quantize_q5_0(const float* x, uint8_t* dst, int64_t n_blocks, const float* importance);
void quantize_q5_1(const float* x, uint8_t* dst, int64_t n_blocks, const float* importance);
void quantize_q8_0(const float* x, uint8_t* dst, int64_t n_blocks, const float* importance);
void quantize_q4_k(const float* x, uint8_t* dst, int64_t n_blocks, const float* importance);
void quantize_q5_k(const float* x, uint8_t* dst, int64_t n_blocks, const float* importance);
void quantize_q6_k(const float* x, uint8_t* dst, int64_t n_blocks, const float* importance);

}  // namespace minnow::quant
