// Pieces shared by the CLI subcommands.
#pragma once
#include <CLI/CLI.hpp>
#include <string>

#include "minnow/llm.hpp"

namespace minnow::cli {

struct ModelFlags {
  std::string model;
  int threads = 0;
  int ctx = 4096;
  bool int8_decode = false;
  std::string kv_type = "f16";
};

// -m/--model, -t/--threads, --ctx, --int8-decode, --kv-type.
void add_model_flags(CLI::App& app, ModelFlags& f, bool with_ctx = true);
// --temp, --top-k, --top-p, --min-p, --repeat-penalty, --repeat-last-n, --seed.
void add_sampling_flags(CLI::App& app, SamplingOptions& s);

std::unique_ptr<Model> load_model_or_throw(const std::string& path);
SessionOptions session_options(const ModelFlags& f);

// Subcommands: each adds itself to the app.
void register_run(CLI::App& app);
void register_chat(CLI::App& app);
void register_bench(CLI::App& app);
void register_tokenize(CLI::App& app);
void register_logits(CLI::App& app);
void register_template(CLI::App& app);
void register_inspect(CLI::App& app);
void register_perplexity(CLI::App& app);
void register_serve(CLI::App& app);

}  // namespace minnow::cli
