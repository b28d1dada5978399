// minnow imatrix: runs a model over a calibration text and writes, per weight matrix and
// input column, the sum of squared activations and the rows summed (an importance matrix
// in llama.cpp's GGUF form) for `minnow quantize --imatrix`. The text is cut into chunks
// as `minnow perplexity` cuts it: --ctx tokens each, the first replaced by BOS.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>

#include "base/error.hpp"
#include "base/thread_pool.hpp"
#include "cli/common.hpp"
#include "models/kv_cache.hpp"
#include "models/model.hpp"
#include "models/transformer.hpp"
#include "quant/imatrix.hpp"
#include "quant/imatrix_collector.hpp"

namespace minnow::cli {

void register_imatrix(CLI::App& app) {
  struct Opts {
    std::string model, file, out = "imatrix.gguf";
    int ctx = 512, chunks = 0, threads = 0;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("imatrix", "Importance matrix (per-column activation statistics) for quantize --imatrix");
  cmd->footer(
      "The output is llama.cpp's imatrix GGUF (<name>.in_sum2, <name>.counts); llama-quantize reads it too.\n"
      "Example:\n"
      "  minnow imatrix -m models/SmolLM2-135M-Instruct.Q4_1.gguf -f calibration.txt -o smol.imatrix.gguf --chunks 100");
  cmd->add_option("-m,--model", o->model, "Model: a GGUF file or a Hugging Face checkpoint directory")->required();
  cmd->add_option("-f,--file", o->file, "Calibration text (not the text you will measure perplexity on)")->required();
  cmd->add_option("-o,--output", o->out, "Output file (default: imatrix.gguf)");
  cmd->add_option("-c,--ctx", o->ctx, "Tokens per chunk (default: 512)")->check(CLI::Range(8, 1 << 20));
  cmd->add_option("--chunks", o->chunks, "Use at most this many chunks (default: all)")->check(CLI::NonNegativeNumber);
  cmd->add_option("-t,--threads", o->threads, "Threads (default: one per core)")->check(CLI::NonNegativeNumber);
  cmd->callback([o] {
    std::ifstream in(o->file, std::ios::binary);
    if (!in) throw Error("imatrix: cannot open '" + o->file + "'");
    const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    auto model = load_model_or_throw(o->model);
    const LoadedModel& lm = model->impl();
    const Tokenizer& tok = *lm.tokenizer;
    const int n_ctx = std::min(o->ctx, lm.config.ctx_train);
    const std::vector<int32_t> tokens = tok.encode(text, /*parse_special=*/false);
    int n_chunks = static_cast<int>(tokens.size() / static_cast<size_t>(n_ctx));
    if (o->chunks > 0) n_chunks = std::min(n_chunks, o->chunks);
    if (n_chunks == 0)
      throw Error("imatrix: '" + o->file + "' has " + std::to_string(tokens.size()) + " tokens, fewer than one chunk of " +
                  std::to_string(n_ctx) + " (lower --ctx)");

    ThreadPool pool(o->threads);
    KvCache kv(lm.config, n_ctx, DType::F16);
    const int batch = std::min(n_ctx, 512);
    Transformer net(lm, batch, pool);
    quant::ImatrixCollector collector(lm);
    net.set_matmul_observer(&collector);
    // Every row's logits: the head then sees every token, as the other matrices do.
    std::vector<float> logits(static_cast<size_t>(batch) * static_cast<size_t>(lm.config.vocab_size));
    std::fprintf(stderr, "imatrix: %zu tokens, %d chunks of %d, %d threads\n", tokens.size(), n_chunks, n_ctx, pool.size());
    const auto t0 = std::chrono::steady_clock::now();
    for (int c = 0; c < n_chunks; ++c) {
      std::vector<int32_t> chunk(tokens.begin() + static_cast<ptrdiff_t>(c) * n_ctx,
                                 tokens.begin() + static_cast<ptrdiff_t>(c + 1) * n_ctx);
      if (tok.add_bos() && tok.bos_id() >= 0) chunk[0] = tok.bos_id();
      for (int i = 0; i < n_ctx; i += batch)
        net.forward(chunk.data() + i, std::min(batch, n_ctx - i), i, kv, logits.data(), /*all_logits=*/true);
      const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::fprintf(stderr, "imatrix: [%d/%d] %.1f s\n", c + 1, n_chunks, secs);
    }
    quant::Imatrix m = collector.result();
    m.datasets = {o->file};
    m.chunk_count = n_chunks;
    m.chunk_size = n_ctx;
    quant::write_imatrix(m, o->out);
    std::fprintf(stderr, "imatrix: %zu matrices -> %s\n", m.entries.size(), o->out.c_str());
  });
}

}  // namespace minnow::cli
