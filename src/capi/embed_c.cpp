// C API: sentence embeddings (over minnow::Embedder).
#include <cstring>
#include <string>
#include <vector>

#include "capi/capi.hpp"
#include "minnow/embed.hpp"

using minnow::capi::check_handle;
using minnow::capi::fail;
using minnow::capi::guard;

struct minnow_embedder {
  std::unique_ptr<minnow::Embedder> embedder;
};

extern "C" {

minnow_embedder_params minnow_embedder_params_default(void) {
  minnow_embedder_params p{};
  p.n_threads = 0;
  p.precision = MINNOW_EMBED_BF16;
  return p;
}

minnow_status minnow_embedder_load(const char* dir, const minnow_embedder_params* params, minnow_embedder** out) {
  if (out == nullptr) return fail(MINNOW_ERR_INVALID_ARGUMENT, "minnow_embedder_load: out is NULL");
  *out = nullptr;
  if (dir == nullptr) return fail(MINNOW_ERR_INVALID_ARGUMENT, "minnow_embedder_load: dir is NULL");
  const minnow_embedder_params p = params ? *params : minnow_embedder_params_default();
  if (p.n_threads < 0)
    return fail(MINNOW_ERR_INVALID_ARGUMENT, "minnow_embedder_load: n_threads must be >= 0 (got " + std::to_string(p.n_threads) + ")");
  if (p.precision != MINNOW_EMBED_BF16 && p.precision != MINNOW_EMBED_F32 && p.precision != MINNOW_EMBED_Q8_0)
    return fail(MINNOW_ERR_INVALID_ARGUMENT,
                "minnow_embedder_load: precision " + std::to_string(p.precision) + " is not a minnow_embed_precision");
  return guard(MINNOW_ERR_LOAD, [&] {
    using P = minnow::EmbedderOptions::Precision;
    minnow::EmbedderOptions o{.n_threads = p.n_threads};
    o.precision = p.precision == MINNOW_EMBED_F32 ? P::F32 : p.precision == MINNOW_EMBED_Q8_0 ? P::Q8_0 : P::BF16;
    auto h = std::make_unique<minnow_embedder>();
    h->embedder = minnow::Embedder::load(dir, o);
    return minnow::capi::publish(std::move(h), out);
  });
}

void minnow_embedder_free(minnow_embedder* embedder) { minnow::capi::destroy(embedder); }

int32_t minnow_embedder_dim(const minnow_embedder* embedder) {
  if (!minnow::capi::is_live(embedder)) return 0;
  return embedder->embedder->dim();
}

minnow_status minnow_embed(minnow_embedder* embedder, const char* const* texts, const size_t* lengths, size_t n_texts,
                           float* out, size_t capacity, int64_t* n_tokens) {
  if (!check_handle(embedder, "minnow_embed", "embedder")) return MINNOW_ERR_INVALID_ARGUMENT;
  if (n_texts > 0 && (texts == nullptr || out == nullptr))
    return fail(MINNOW_ERR_INVALID_ARGUMENT, "minnow_embed: texts and out must not be NULL");
  const auto dim = static_cast<size_t>(embedder->embedder->dim());
  if (capacity < n_texts * dim)
    return fail(MINNOW_ERR_BUFFER_TOO_SMALL, "minnow_embed: out holds " + std::to_string(capacity) + " floats; " +
                                                 std::to_string(n_texts * dim) + " are needed");
  std::vector<std::string> v;
  v.reserve(n_texts);
  for (size_t i = 0; i < n_texts; ++i) {
    if (texts[i] == nullptr) return fail(MINNOW_ERR_INVALID_ARGUMENT, "minnow_embed: texts[" + std::to_string(i) + "] is NULL");
    v.emplace_back(texts[i], lengths ? lengths[i] : std::strlen(texts[i]));
  }
  return guard(MINNOW_ERR_INVALID_ARGUMENT, [&] {
    const std::vector<float> e = embedder->embedder->embed(v, 32, n_tokens);
    std::memcpy(out, e.data(), e.size() * sizeof(float));
    return MINNOW_OK;
  });
}

}  // extern "C"
