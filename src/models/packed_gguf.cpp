#include "models/packed_gguf.hpp"

#include <bit>

#include "base/error.hpp"
#include "kernels/packed.hpp"

namespace minnow {
namespace {

// The layout stores f16 scales and quant bytes little-endian, as GGUF does.
static_assert(std::endian::native == std::endian::little, "packed files are little-endian");

[[noreturn]] void fail(const std::string& msg) { throw Error("packed gguf: " + msg); }

}  // namespace

PackInfo check_packed_gguf(const GgufFile& f) {
  PackInfo info;
  for (const auto& t : f.tensors()) info.n_packed += t.packed;
  const auto layout = f.get_string(kPackLayoutKey);
  const auto version = f.get_int(kPackVersionKey);
  if (!layout) {
    if (info.n_packed > 0) fail(std::to_string(info.n_packed) + " packed tensors but no '" + kPackLayoutKey + "' metadata");
    if (version) fail(std::string("'") + kPackVersionKey + "' without '" + kPackLayoutKey + "'");
    return info;
  }
  const std::string want = kernels::kPackedLayoutName, want_v = std::to_string(kernels::kPackedLayoutVersion);
  if (*layout != want)
    fail("packed for layout '" + std::string(*layout) + "', but this minnow reads '" + want + "' v" + want_v +
         " (run minnow pack on the original GGUF again)");
  if (!version) fail(std::string("missing '") + kPackVersionKey + "'");
  if (*version != kernels::kPackedLayoutVersion)
    fail("packed with layout '" + want + "' v" + std::to_string(*version) + ", but this minnow reads v" + want_v +
         " (run minnow pack on the original GGUF again)");
  if (info.n_packed > 0 && f.alignment() % kernels::kPackedAlignment != 0)
    fail("general.alignment " + std::to_string(f.alignment()) + " is not a multiple of " +
         std::to_string(kernels::kPackedAlignment) + ", which packed tensors need");
  for (const auto& t : f.tensors()) {
    if (!t.packed) continue;
    // The reader sized it from tensor/packed_types.hpp; the kernels must agree.
    if (!kernels::packable(t.type) || t.n_bytes != kernels::packed_bytes(t.type, t.dims[1], t.dims[0]))
      fail("tensor '" + t.name + "': " + std::to_string(t.n_bytes) + " bytes do not match the packed layout");
  }
  info.layout = std::string(*layout);
  info.version = *version;
  return info;
}

}  // namespace minnow
