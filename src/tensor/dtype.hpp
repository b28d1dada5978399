// Element types of tensors as GGUF/GGML number them, with one traits entry per type:
// block size, bytes per block, and a scalar dequantizer. Layouts follow the GGUF spec.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace minnow {

enum class DType : uint32_t {
  F32 = 0, F16 = 1, Q4_0 = 2, Q4_1 = 3, Q5_0 = 6, Q5_1 = 7, Q8_0 = 8, Q8_1 = 9,
  Q2_K = 10, Q3_K = 11, Q4_K = 12, Q5_K = 13, Q6_K = 14, Q8_K = 15, BF16 = 30,
};

// Turns n_blocks consecutive blocks at src into n_blocks * block_size floats.
using DequantizeFn = void (*)(const void* src, float* dst, int64_t n_blocks);

struct DTypeTraits {
  DType type;
  const char* name;
  int64_t block_size;    // elements per block
  int64_t block_bytes;   // bytes per block
  DequantizeFn dequantize;  // nullptr: layout known (files parse) but not computable yet
};

// x (32 * n_blocks floats) -> Q8_0 blocks as GGUF defines them: d = max|x| / 127 (stored
// as f16), q = round(x / d).
void quantize_q8_0(const float* x, void* dst, int64_t n_blocks);

// The 6-bit scale and minimum of sub-block j (0..7) from the 12 scale bytes of a Q4_K/Q5_K
// block.
inline void k_scale_min(int j, const uint8_t* s, uint8_t* sc, uint8_t* mn) {
  if (j < 4) {
    *sc = s[j] & 63;
    *mn = s[j + 4] & 63;
  } else {
    *sc = static_cast<uint8_t>((s[j + 4] & 0xf) | ((s[j - 4] >> 6) << 4));
    *mn = static_cast<uint8_t>((s[j + 4] >> 4) | ((s[j] >> 6) << 4));
  }
}

// nullptr for a type id minnow does not know at all.
const DTypeTraits* dtype_traits(uint32_t type_id);
const DTypeTraits& dtype_traits(DType t);
const char* dtype_name(DType t);

// Bytes of n elements of type t; nullopt if n is not a whole number of blocks or overflows.
std::optional<uint64_t> dtype_bytes(DType t, uint64_t n);

}  // namespace minnow
