// GGUF type ids for matrices that `minnow pack` stores already in the decode kernels'
// layout (kernels/packed.hpp): 1024 + the GGUF id of the type they hold (Q4_0 -> 1026).
// They are not GGML types on purpose: another GGUF reader refuses such a tensor instead of
// misreading its bytes. The byte sizes here must equal kernels::packed_bytes (the loader
// and tests/unit/packed_file_test.cpp check it); formats/ cannot depend on kernels/.
#pragma once
#include <cstdint>
#include <optional>

#include "tensor/dtype.hpp"

namespace minnow {

constexpr uint32_t kPackedTypeIdOffset = 1024;

// The type a packed id holds (Q4_0..Q8_0, Q4_K, Q5_K, Q6_K), or nullopt.
std::optional<DType> packed_base_type(uint32_t type_id);
// The packed id of t; t must be packable.
uint32_t packed_type_id(DType t);
// Bytes of a rows x cols matrix of t packed: groups of 8 rows (the last padded with zero
// rows) of group-blocks; nullopt if cols is not a whole number of blocks or it overflows.
std::optional<uint64_t> packed_matrix_bytes(DType t, uint64_t rows, uint64_t cols);

}  // namespace minnow
