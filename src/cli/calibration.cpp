#include "cli/calibration.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>

#include "base/error.hpp"
#include "models/kv_cache.hpp"
#include "models/transformer.hpp"

namespace minnow::cli {

CalibrationRun run_calibration(const LoadedModel& lm, const std::string& path, int ctx, int max_chunks, ThreadPool& pool,
                               MatmulObserver& observer, const char* label) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(std::string(label) + ": cannot open '" + path + "'");
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  const Tokenizer& tok = *lm.tokenizer;
  const int n_ctx = std::min(ctx, lm.config.ctx_train);
  const std::vector<int32_t> tokens = tok.encode(text, /*parse_special=*/false);
  int n_chunks = static_cast<int>(tokens.size() / static_cast<size_t>(n_ctx));
  if (max_chunks > 0) n_chunks = std::min(n_chunks, max_chunks);
  if (n_chunks == 0)
    throw Error(std::string(label) + ": '" + path + "' has " + std::to_string(tokens.size()) +
                " tokens, fewer than one chunk of " + std::to_string(n_ctx) + " (lower --ctx)");

  KvCache kv(lm.config, n_ctx, DType::F16);
  const int batch = std::min(n_ctx, 512);
  Transformer net(lm, batch, pool);
  net.set_matmul_observer(&observer);
  std::vector<float> logits(static_cast<size_t>(batch) * static_cast<size_t>(lm.config.vocab_size));
  std::fprintf(stderr, "%s: %zu tokens, %d chunks of %d, %d threads\n", label, tokens.size(), n_chunks, n_ctx, pool.size());
  const auto t0 = std::chrono::steady_clock::now();
  for (int c = 0; c < n_chunks; ++c) {
    std::vector<int32_t> chunk(tokens.begin() + static_cast<ptrdiff_t>(c) * n_ctx,
                               tokens.begin() + static_cast<ptrdiff_t>(c + 1) * n_ctx);
    if (tok.add_bos() && tok.bos_id() >= 0) chunk[0] = tok.bos_id();
    for (int i = 0; i < n_ctx; i += batch)
      net.forward(chunk.data() + i, std::min(batch, n_ctx - i), i, kv, logits.data(), /*all_logits=*/true);
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::fprintf(stderr, "%s: [%d/%d] %.1f s\n", label, c + 1, n_chunks, secs);
  }
  return {n_chunks, n_ctx};
}

}  // namespace minnow::cli
