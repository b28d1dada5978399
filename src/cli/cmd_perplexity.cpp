// minnow perplexity: perplexity of a model on a text file, computed the way llama.cpp's
// llama-perplexity does so the two can be compared: the whole text is tokenized once
// (with BOS), cut into chunks of --ctx tokens, each chunk evaluated from scratch with its
// first token replaced by BOS, and the negative log-likelihood of the second half of each
// chunk's predictions averaged.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>

#include "base/error.hpp"
#include "cli/common.hpp"
#include "models/model.hpp"

namespace minnow::cli {

void register_perplexity(CLI::App& app) {
  struct Opts {
    ModelFlags model;
    std::string file;
    int chunks = 0;
  };
  auto o = std::make_shared<Opts>();
  o->model.ctx = 512;
  auto* cmd = app.add_subcommand("perplexity", "Perplexity of the model on a text file (llama.cpp's method)");
  cmd->footer("Example:\n  minnow perplexity -m models/SmolLM2-135M-Instruct.Q4_1.gguf -f ../shared/data/wikitext-2-raw/wiki.test.raw --ctx 512 --chunks 40");
  add_model_flags(*cmd, o->model);
  cmd->add_option("-f,--file", o->file, "Text file")->required();
  cmd->add_option("--chunks", o->chunks, "Evaluate at most this many chunks (default: all)")->check(CLI::NonNegativeNumber);
  cmd->callback([o] {
    std::ifstream in(o->file, std::ios::binary);
    if (!in) throw Error("perplexity: cannot open '" + o->file + "'");
    const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    auto model = load_model_or_throw(o->model.model);
    const Tokenizer& tok = *model->impl().tokenizer;
    const int n_ctx = o->model.ctx;
    if (n_ctx < 8) throw Error("perplexity: --ctx must be at least 8");
    std::vector<int32_t> tokens = tok.encode(text, /*parse_special=*/false);
    int n_chunks = static_cast<int>(tokens.size() / static_cast<size_t>(n_ctx));
    if (o->chunks > 0) n_chunks = std::min(n_chunks, o->chunks);
    if (n_chunks == 0) throw Error("perplexity: the file has fewer than --ctx (" + std::to_string(n_ctx) + ") tokens");
    std::fprintf(stderr, "perplexity: %zu tokens, %d chunks of %d\n", tokens.size(), n_chunks, n_ctx);
    Session session(*model, session_options(o->model));
    const int first = n_ctx / 2;  // only predictions with at least half a context are scored
    double nll = 0, nll2 = 0;  // sum of per-token NLL and of its square, for the standard error
    long count = 0;
    const auto t0 = std::chrono::steady_clock::now();
    for (int c = 0; c < n_chunks; ++c) {
      std::vector<int32_t> chunk(tokens.begin() + static_cast<ptrdiff_t>(c) * n_ctx, tokens.begin() + static_cast<ptrdiff_t>(c + 1) * n_ctx);
      if (tok.add_bos() && tok.bos_id() >= 0) chunk[0] = tok.bos_id();
      session.reset();
      session.eval_all(chunk, [&](int pos, std::span<const float> logits) {
        if (pos < first || pos + 1 >= n_ctx) return;
        float mx = -INFINITY;
        for (float v : logits) mx = std::max(mx, v);
        double sum = 0;
        for (float v : logits) sum += std::exp(static_cast<double>(v - mx));
        const int32_t next = tokens[static_cast<size_t>(c) * n_ctx + pos + 1];
        const double x = std::log(sum) - (logits[static_cast<size_t>(next)] - mx);
        nll += x;
        nll2 += x * x;
        ++count;
      });
      const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::fprintf(stderr, "[%d/%d] ppl %.4f  (%.1f s)\n", c + 1, n_chunks, std::exp(nll / count), secs);
    }
    // Standard error of the mean NLL, carried to the perplexity (as llama-perplexity reports it).
    const double mean = nll / count, var = std::max(0.0, nll2 / count - mean * mean);
    const double ppl = std::exp(mean), se = count > 1 ? ppl * std::sqrt(var / static_cast<double>(count - 1)) : 0.0;
    std::printf("perplexity %.4f +/- %.4f over %d chunks of %d tokens (%ld scored)\n", ppl, se, n_chunks, n_ctx, count);
  });
}

}  // namespace minnow::cli
