// Consistency checks shared by the loaders.
#include "base/error.hpp"
#include "models/loaders.hpp"

namespace minnow {
namespace {
[[noreturn]] void fail(const std::string& msg) { throw Error("model: " + msg); }
}  // namespace

void validate_config(const ModelConfig& c) {
  auto positive = [](int v, const char* what) {
    if (v <= 0) fail(std::string(what) + " must be positive");
  };
  positive(c.n_layers, "the number of layers");
  positive(c.d_model, "the hidden size");
  positive(c.n_heads, "the number of attention heads");
  positive(c.n_kv_heads, "the number of key/value heads");
  positive(c.d_ff, "the FFN size");
  positive(c.vocab_size, "the vocabulary size");
  if (c.head_dim <= 0 || c.head_dim % 2 != 0) fail("head dimension " + std::to_string(c.head_dim) + " must be even and positive");
  if (c.n_heads % c.n_kv_heads != 0) fail("the attention heads are not a multiple of the key/value heads");
  if (!(c.rms_eps > 0)) fail("the RMSNorm epsilon must be positive");
  if (!(c.rope_base > 1) || !(c.rope_base_local > 1)) fail("the RoPE base must be greater than 1");
}

}  // namespace minnow
