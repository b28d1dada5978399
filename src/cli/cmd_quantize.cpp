// minnow quantize: a GGUF file or a Hugging Face checkpoint directory in, a GGUF file of
// the chosen type (or mixed recipe) out, readable by minnow, llama.cpp and the gguf package.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>

#include "base/error.hpp"
#include "base/thread_pool.hpp"
#include "cli/calibration.hpp"
#include "cli/common.hpp"
#include "quant/awq.hpp"
#include "quant/hessian_collector.hpp"
#include "quant/model_source.hpp"
#include "quant/quantize_model.hpp"

namespace minnow::cli {
namespace {

struct Opts {
  std::string in, out, type, imatrix, gptq;
  int threads = 0, ctx = 512, gptq_chunks = 32;
  double gptq_damp = 0.1;
  bool pure = false, awq = false;
  std::vector<std::string> overrides;
};

double mib(uint64_t n) { return static_cast<double>(n) / (1 << 20); }

// One line, rewritten in place on a terminal; every 10% otherwise (logs stay short).
class ProgressLine {
 public:
  ProgressLine() : tty_(isatty(STDERR_FILENO)) {}
  void update(const quant::Progress& p) {
    const int pct = p.total_elements ? static_cast<int>(100 * p.done_elements / p.total_elements) : 100;
    if (tty_) {
      std::fprintf(stderr, "\r\033[K[%3d%%] %zu/%zu %s -> %s", pct, p.tensor_index, p.n_tensors, p.name->c_str(),
                   dtype_name(p.type));
      open_ = true;
    } else if (pct / 10 > last_decile_) {
      last_decile_ = pct / 10;
      std::fprintf(stderr, "quantize: %3d%% (%zu/%zu tensors)\n", pct, p.tensor_index, p.n_tensors);
    }
  }
  void note(const std::string& s) {
    end_line();
    std::fprintf(stderr, "quantize: %s\n", s.c_str());
  }
  void end_line() {
    if (open_) std::fputc('\n', stderr), open_ = false;
  }

 private:
  bool tty_;
  bool open_ = false;
  int last_decile_ = 0;
};

// A summary line, and one for the groups left alone.
void report_awq(const quant::AwqReport& r) {
  std::vector<float> alphas;
  double error = 0, unscaled = 0;
  for (const quant::AwqGroup& g : r.groups) {
    if (g.alpha > 0) alphas.push_back(g.alpha);
    error += g.error, unscaled += g.unscaled_error;
  }
  std::sort(alphas.begin(), alphas.end());
  std::fprintf(stderr, "quantize: --awq: %zu of %zu groups scaled", alphas.size(), r.groups.size());
  if (!alphas.empty())
    std::fprintf(stderr, " (alpha %.3g..%.3g, median %.3g)", alphas.front(), alphas.back(), alphas[alphas.size() / 2]);
  if (unscaled > 0) std::fprintf(stderr, "; their weighted rounding error %.3fx of unscaled", error / unscaled);
  std::fprintf(stderr, "\n");
  if (!r.skipped.empty())
    std::fprintf(stderr, "quantize: --awq: %zu group%s left alone (%s%s)\n", r.skipped.size(), r.skipped.size() == 1 ? "" : "s",
                 r.skipped[0].c_str(), r.skipped.size() > 1 ? "; ..." : "");
}

void run(const Opts& o) {
  const auto target = quant::parse_target(o.type);
  if (!target) throw Error("quantize: unknown type '" + o.type + "' (types: " + quant::target_names() + ")");
  quant::Plan plan{*target, o.pure, {}};
  for (const auto& spec : o.overrides) plan.overrides.push_back(quant::parse_override(spec));
  if (o.in == o.out) throw Error("quantize: the output would overwrite the input '" + o.in + "'");
  // Checked before calibration (--gptq) or the --awq search rather than when the writer opens OUT.tmp.
  const std::filesystem::path dir = std::filesystem::path(o.out).parent_path();
  if (!dir.empty() && !std::filesystem::is_directory(dir))
    throw Error("quantize: the output's folder '" + dir.string() + "' does not exist");

  auto src = quant::open_model_source(o.in);
  std::optional<quant::Imatrix> imatrix;
  if (!o.imatrix.empty()) {
    imatrix = quant::read_imatrix(o.imatrix);
    std::fprintf(stderr, "quantize: imatrix %s: %zu entries, %d chunks of %d\n", o.imatrix.c_str(), imatrix->entries.size(),
                 imatrix->chunk_count, imatrix->chunk_size);
  }
  ThreadPool pool(o.threads);
  std::optional<quant::GptqOptions> gptq;
  if (!o.gptq.empty()) {
    if (imatrix) throw Error("quantize: --gptq gathers its own importance from the calibration text: drop --imatrix");
    gptq.emplace();
    gptq->damp = o.gptq_damp;
    {
      auto model = load_model_or_throw(o.in);
      quant::HessianCollector collector(model->impl(), pool);
      run_calibration(model->impl(), o.gptq, o.ctx, o.gptq_chunks, pool, collector, "quantize --gptq");
      gptq->moments = collector.take();
    }
    // The diagonals are the importance every block's scales are chosen with.
    imatrix.emplace();
    for (const auto& [name, m] : gptq->moments) imatrix->entries[name] = {m->diag, {1.0f}};
  }
  if (o.awq) report_awq(quant::apply_awq(*src, *imatrix, [&](size_t i) {
    const quant::SourceTensor& t = src->tensors[i];
    return plan.choose({t.name, t.dims, src->n_layers, src->tied_output}).type;
  }, pool));
  ProgressLine line;
  quant::QuantizeCallbacks cb;
  cb.progress = [&](const quant::Progress& p) { line.update(p); };
  cb.note = [&](const std::string& s) { line.note(s); };
  std::fprintf(stderr, "quantize: %s (%s, %zu tensors) -> %s as %s, %d threads\n", o.in.c_str(), src->format.c_str(),
               src->tensors.size(), o.out.c_str(), target->name.c_str(), pool.size());
  quant::QuantizeReport r;
  try {
    r = quant::quantize_model(*src, plan, o.out, pool, cb, imatrix ? &*imatrix : nullptr, gptq ? &*gptq : nullptr);
  } catch (...) {
    line.end_line();
    throw;
  }
  line.end_line();
  std::string types;
  for (const auto& [name, n] : r.type_counts) types += (types.empty() ? "" : ", ") + name + " x" + std::to_string(n);
  const double n = static_cast<double>(r.n_elements);
  std::fprintf(stderr, "quantize: %.2f MiB -> %.2f MiB of weights (%.2f -> %.2f bits per weight), file %.2f MiB, %.2f s\n",
               mib(r.in_bytes), mib(r.out_bytes), 8.0 * static_cast<double>(r.in_bytes) / n,
               8.0 * static_cast<double>(r.out_bytes) / n, mib(r.out_file_bytes), r.seconds);
  std::fprintf(stderr, "quantize: tensor types: %s\n", types.c_str());
}

}  // namespace

void register_quantize(CLI::App& app) {
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("quantize", "Convert a model (GGUF or Hugging Face directory) to a quantized GGUF");
  cmd->description(
      "Convert a model to a quantized GGUF file that minnow, llama.cpp and the gguf Python package read.\n"
      "IN is a GGUF file (any type minnow reads: each tensor is dequantized to f32, then requantized) or a\n"
      "Hugging Face checkpoint directory (config.json, tokenizer.json, F32/F16/BF16 safetensors).");
  cmd->footer(
      "Types (bits per weight, counting scales):\n"
      "  F32 32, F16 16, BF16 16, Q8_0 8.5, Q6_K 6.56, Q5_1 6, Q5_K 5.5, Q5_0 5.5, Q4_1 5, Q4_K 4.5, Q4_0 4.5\n"
      "  Q4_K_M, Q5_K_M  mixed recipes: Q4_K / Q5_K matrices, with Q6_K for the output head and for attn_v and\n"
      "                  ffn_down in the first and last eighth of the layers and every third layer between\n"
      "  Q4_K_KV         minnow's: Q4_K matrices, Q6_K output head, attn_k Q5_K and attn_v Q6_K in every layer,\n"
      "                  ffn_down Q6_K in the first and last eighth only (smaller than Q4_K_M on grouped-query\n"
      "                  models, and closer to the source: docs/quantize.md)\n"
      "Rules:\n"
      "  - 1-D tensors (norms, biases) stay F32 (an --override names matrices only, unless its type is a float one).\n"
      "  - Without --pure the output head (output.weight, or token_embd.weight when tied) gets at least Q6_K.\n"
      "  - A tensor whose row length is not a multiple of the type's block (256 for K types, 32 for the others)\n"
      "    falls back to one that fits (Q4_K -> Q5_0, Q5_K -> Q5_1, Q6_K -> Q8_0, else F16); the log says so.\n"
      "  - Q4_0..Q8_0 round as ggml's reference does (byte for byte); K types search each scale and minimum\n"
      "    for the least (value-weighted) squared error.\n"
      "  - The output is written as OUT.tmp and renamed at the end: a failure leaves no OUT behind.\n"
      "Examples:\n"
      "  minnow quantize models/SmolLM2-135M-Instruct.Q4_1.gguf /tmp/smol.Q8_0.gguf --type Q8_0\n"
      "  minnow quantize path/to/hf-checkpoint-dir model.Q4_K_M.gguf --type Q4_K_M -t 8\n"
      "  minnow quantize in.gguf out.gguf --type Q4_0 --imatrix smol.imatrix.gguf\n"
      "  minnow quantize in.gguf out.gguf --type Q4_K_M --imatrix smol.imatrix.gguf --awq\n"
      "  minnow quantize in.gguf out.gguf --type Q4_K_M --gptq calibration.txt --gptq-chunks 32\n"
      "  minnow quantize in.gguf out.gguf --type Q4_K --override 'blk.*.attn_v.weight=Q8_0' --override '/ffn_down/=Q6_K'");
  cmd->add_option("IN", o->in, "Input: a GGUF file or a Hugging Face checkpoint directory")->required();
  cmd->add_option("OUT", o->out, "Output GGUF file (replaced if it exists)")->required();
  cmd->add_option("--type", o->type, "Target type or recipe: " + quant::target_names())->required();
  cmd->add_option("-t,--threads", o->threads, "Threads (default: one per core)")->check(CLI::NonNegativeNumber);
  auto* imatrix_opt = cmd->add_option("--imatrix", o->imatrix,
                  "Importance matrix (minnow imatrix or llama-imatrix, GGUF or legacy .dat): every quantized type "
                  "then minimizes the activation-weighted rounding error");
  cmd->add_flag("--awq", o->awq,
                "Activation-aware scaling (AWQ) from the --imatrix: the columns of Q, K, V, gate, up and down are "
                "scaled by a power of their mean squared activation, and the norm (for down: up's rows) divided by "
                "it; the power searched per layer for the least weighted rounding error (0: unscaled)")
      ->needs(imatrix_opt);
  auto* gptq = cmd->add_option("--gptq", o->gptq,
                  "Calibration text for GPTQ: the model runs over it first, then each matrix is rounded column by "
                  "column with the errors carried onto later columns (the output error on that text is minimized; "
                  "implies an importance matrix from the same text)");
  // Calibration settings mean nothing without --gptq: refused rather than ignored.
  cmd->add_option("--gptq-chunks", o->gptq_chunks, "Chunks of the calibration text for --gptq (default: 32)")
      ->check(CLI::PositiveNumber)
      ->needs(gptq);
  cmd->add_option("-c,--ctx", o->ctx, "Tokens per calibration chunk (default: 512)")
      ->check(CLI::Range(8, 1 << 20))
      ->needs(gptq);
  cmd->add_option("--gptq-damp", o->gptq_damp, "GPTQ damping, a fraction of the mean diagonal added to it "
                  "(default: 0.1; the paper's 0.01 measured worse here)")
      ->check(CLI::Range(1e-6, 10.0))
      ->needs(gptq);
  cmd->add_flag("--pure", o->pure, "Every matrix at --type: no recipe table, no higher-bit output head");
  cmd->add_option("--override", o->overrides,
                  "PATTERN=TYPE for the tensors whose name matches: a glob ('blk.*.attn_v.weight') or /regex/; "
                  "repeatable, the last match wins, over every other rule");
  cmd->callback([o] { run(*o); });
}

}  // namespace minnow::cli
