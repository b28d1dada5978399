// minnow imatrix: runs a model over a calibration text and writes, per weight matrix and
// input column, the sum of squared activations and the rows summed (an importance matrix
// in llama.cpp's GGUF form) for `minnow quantize --imatrix`. The text is cut into chunks
// as `minnow perplexity` cuts it: --ctx tokens each, the first replaced by BOS.
#include <cstdio>

#include "base/thread_pool.hpp"
#include "cli/calibration.hpp"
#include "cli/common.hpp"
#include "models/model.hpp"
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
    auto model = load_model_or_throw(o->model);
    const LoadedModel& lm = model->impl();
    ThreadPool pool(o->threads);
    quant::ImatrixCollector collector(lm);
    const CalibrationRun run = run_calibration(lm, o->file, o->ctx, o->chunks, pool, collector, "imatrix");
    quant::Imatrix m = collector.result();
    m.datasets = {o->file};
    m.chunk_count = run.chunks;
    m.chunk_size = run.chunk_size;
    quant::write_imatrix(m, o->out);
    std::fprintf(stderr, "imatrix: %zu matrices -> %s\n", m.entries.size(), o->out.c_str());
  });
}

}  // namespace minnow::cli
