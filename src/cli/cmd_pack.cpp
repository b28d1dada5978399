// minnow pack IN OUT: a GGUF with its quantized matrices stored in the kernels' layout, so
// loading maps them read-only instead of copying them into anonymous memory (docs/pack.md).
#include <chrono>
#include <cstdio>
#include <memory>

#include "cli/common.hpp"
#include "kernels/packed.hpp"
#include "models/write_packed.hpp"

namespace minnow::cli {

void register_pack(CLI::App& app) {
  struct Opts {
    std::string in, out;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("pack", "Pre-pack a GGUF's weights in the runtime layout (loads with no copy)");
  cmd->footer(
      "The output is a GGUF that minnow loads with every Q4_0/Q4_1/Q5_0/Q5_1/Q8_0/Q4_K/Q5_K/Q6_K matrix\n"
      "mapped read-only from the file (clean pages the OS can drop and re-read) instead of copied.\n"
      "One layout serves every CPU minnow runs on (x86-64 AVX2/VNNI, aarch64 NEON/dotprod/i8mm);\n"
      "llama.cpp cannot read the packed tensors. Details: docs/pack.md.\n"
      "Example:\n"
      "  minnow pack models/SmolLM2-135M-Instruct.Q4_1.gguf /tmp/smol.packed.gguf");
  cmd->add_option("IN", o->in, "GGUF file to pack")->required();
  cmd->add_option("OUT", o->out, "Packed GGUF to write (written as OUT.tmp, renamed at the end)")->required();
  cmd->callback([o] {
    const auto t0 = std::chrono::steady_clock::now();
    const PackStats s = write_packed_gguf(o->in, o->out);
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::fprintf(stderr, "pack: %s -> %s: %zu of %zu tensors packed (layout %s v%lld), %.1f -> %.1f MiB, %.2f s\n",
                 o->in.c_str(), o->out.c_str(), s.n_packed, s.n_tensors, kernels::kPackedLayoutName,
                 static_cast<long long>(kernels::kPackedLayoutVersion), static_cast<double>(s.in_bytes) / (1 << 20),
                 static_cast<double>(s.out_bytes) / (1 << 20), secs);
  });
}

}  // namespace minnow::cli
