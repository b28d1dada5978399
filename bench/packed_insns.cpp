// minnow_packed_insns: runs one packed matmul kernel over a 1536 x K matrix (SmolLM2's
// feed-forward shape) a given number of times, so that bench/arm/kernel_insns.py can count
// the instructions of two repetition counts under qemu and divide the difference by the
// work: instructions per group-block and token (8 rows x 32 weights x 1 token), the unit
// in which the ARM kernels are compared with their arithmetic floor (docs/arm.md).
//
//   minnow_packed_insns TABLE TYPE BITS TOKENS REPS
//     TABLE   a kernel table: scalar, neon, neon+dotprod, neon+i8mm (x86: avx2, avx2+vnni)
//     TYPE    q4_0 q4_1 q5_0 q5_1 q8_0 q4_k q5_k q6_k
//     BITS    8 (int8 activations, --int8-decode) or 15 (the default)
//     TOKENS  1..4 tokens per call (1: decode; 4: a prompt's batches)
//     REPS    passes over the matrix
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/ops.hpp"
#include "kernels/packed.hpp"

namespace {

using namespace minnow;
using namespace minnow::kernels;

constexpr int64_t kRows = 1536;

bool parse_type(std::string_view s, DType& t) {
  static const std::pair<std::string_view, DType> kTypes[] = {
      {"q4_0", DType::Q4_0}, {"q4_1", DType::Q4_1}, {"q5_0", DType::Q5_0}, {"q5_1", DType::Q5_1},
      {"q8_0", DType::Q8_0}, {"q4_k", DType::Q4_K}, {"q5_k", DType::Q5_K}, {"q6_k", DType::Q6_K}};
  for (const auto& [name, type] : kTypes)
    if (s == name) return t = type, true;
  return false;
}

int usage(const char* why) {
  std::fprintf(stderr, "minnow_packed_insns: %s\nusage: minnow_packed_insns TABLE TYPE BITS TOKENS REPS\n", why);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 6) return usage("expected 5 arguments");
  const KernelTable* kt = kernels_named(argv[1]);
  if (!kt) return usage("unknown kernel table, or one this CPU cannot run");
  DType type;
  if (!parse_type(argv[2], type)) return usage("unknown type");
  const int bits = std::atoi(argv[3]), tokens = std::atoi(argv[4]), reps = std::atoi(argv[5]);
  if (bits != 8 && bits != 15) return usage("BITS must be 8 or 15");
  if (tokens < 1 || tokens > kMaxMultiTokens) return usage("TOKENS must be 1..4");
  if (reps < 1) return usage("REPS must be positive");

  // K-quants need whole 256-column super-blocks.
  const bool k_quant = type == DType::Q4_K || type == DType::Q5_K || type == DType::Q6_K;
  const int64_t cols = k_quant ? 512 : 576, nb = cols / 32;
  const size_t group_bytes = packed_group_bytes(type, cols);

  // Values do not change the instruction count; scales are kept small and finite anyway.
  std::mt19937 rng(1);
  std::vector<uint8_t> w(group_bytes * kRows / kPackRows);
  for (auto& b : w) b = static_cast<uint8_t>(rng() & 0x3b);
  std::vector<Q8Block> x8(static_cast<size_t>(nb * tokens));
  std::vector<Q15Block> x15(x8.size());
  for (auto& b : x8) {
    b.d = 0.01f, b.s = 1.0f;
    for (auto& q : b.q) q = static_cast<int8_t>(rng() % 255 - 127);
  }
  for (auto& b : x15) {
    b.d = 0.01f, b.s = 1.0f;
    for (int i = 0; i < 32; ++i) b.hi[i] = static_cast<int8_t>(rng() % 255 - 127), b.lo[i] = static_cast<int8_t>(rng() % 128);
  }

  float out[8 * kMaxMultiTokens], checksum = 0.0f;
  for (int r = 0; r < reps; ++r)
    for (int64_t g = 0; g < kRows / kPackRows; ++g) {
      const uint8_t* group = w.data() + g * group_bytes;
      if (bits == 8)
        kt->packed_dot(type)(group, x8.data(), nb, tokens, out);
      else
        kt->packed_dot15(type)(group, x15.data(), nb, tokens, out);
      checksum += out[0];
    }
  // The work per pass, for the counting script; the checksum keeps the calls alive.
  std::printf("group_block_tokens_per_rep %lld checksum %g\n", static_cast<long long>(kRows / kPackRows * nb * tokens),
              checksum);
  return 0;
}
