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
  std::string backend = "cpu";
  int device = 0;
  int gpu_layers = -1;
};

// -m/--model, -t/--threads, --ctx, --int8-decode (and --no-int8-decode), --kv-type; the
// defaults are those already in f.
void add_model_flags(CLI::App& app, ModelFlags& f, bool with_ctx = true);
// --temp, --top-k, --top-p, --min-p, --repeat-penalty, --repeat-last-n, --seed.
void add_sampling_flags(CLI::App& app, SamplingOptions& s);

// Structured output: --grammar, --grammar-file, --json-schema, --json-schema-file (at most one).
struct GrammarFlags {
  std::string grammar, grammar_file, json_schema, json_schema_file;
};
void add_grammar_flags(CLI::App& app, GrammarFlags& f);
// The GBNF text the flags ask for ("" for none): files read, a schema converted.
std::string grammar_from_flags(const GrammarFlags& f);

std::unique_ptr<Model> load_model_or_throw(const std::string& path);

// Parses and runs; one clear line on stderr and a non-zero exit code on any error.
int run_cli(CLI::App& app, int argc, char** argv);
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
void register_quantize(CLI::App& app);
void register_pack(CLI::App& app);
void register_devices(CLI::App& app);
void register_imatrix(CLI::App& app);
void register_embed(CLI::App& app);
void register_onnx(CLI::App& app);
void register_ocr(CLI::App& app);
void register_serve(CLI::App& app);  // in the minnow-serve executable
// `minnow serve ...` runs the minnow-serve executable beside this one, so that the HTTP
// and TLS libraries are loaded only by the server (the other commands stay lean in RSS).
void register_serve_launcher(CLI::App& app);
int launch_serve(int argc, char** argv);

}  // namespace minnow::cli
