#include "tensor/packed_types.hpp"

namespace minnow {
namespace {

// Bytes of one group-block (8 rows x one block of columns) in kernels/packed.hpp's layout.
uint64_t group_block_bytes(DType t) {
  switch (t) {
    case DType::Q4_0: return 16 + 128;             // d[8], nibbles
    case DType::Q4_1: return 16 + 16 + 128;        // d[8], m[8], nibbles
    case DType::Q5_0: return 16 + 32 + 128;        // d[8], fifth bits, nibbles
    case DType::Q5_1: return 16 + 16 + 32 + 128;   // d[8], m[8], fifth bits, nibbles
    case DType::Q8_0: return 16 + 256;             // d[8], bytes
    case DType::Q4_K: return 160 + 8 * 128;        // header, 8 sub-blocks of nibbles
    case DType::Q5_K: return 160 + 8 * (32 + 128);
    case DType::Q6_K: return 144 + 8 * (64 + 128);
    default: return 0;
  }
}

}  // namespace

std::optional<DType> packed_base_type(uint32_t type_id) {
  if (type_id < kPackedTypeIdOffset) return std::nullopt;
  const DTypeTraits* tr = dtype_traits(type_id - kPackedTypeIdOffset);
  if (!tr || group_block_bytes(tr->type) == 0) return std::nullopt;
  return tr->type;
}

uint32_t packed_type_id(DType t) { return kPackedTypeIdOffset + static_cast<uint32_t>(t); }

std::optional<uint64_t> packed_matrix_bytes(DType t, uint64_t rows, uint64_t cols) {
  const uint64_t per_block = group_block_bytes(t);
  const auto block = static_cast<uint64_t>(dtype_traits(t).block_size);
  if (per_block == 0 || cols % block != 0) return std::nullopt;
  const uint64_t groups = rows / 8 + (rows % 8 != 0);
  uint64_t n;
  if (__builtin_mul_overflow(groups, cols / block, &n) || __builtin_mul_overflow(n, per_block, &n)) return std::nullopt;
  return n;
}

}  // namespace minnow
