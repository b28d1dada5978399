// minnow command-line front end: a thin layer over the C++ API (include/minnow/llm.hpp).
#include <cstdio>
#include <iostream>
#include <string_view>

#include "base/error.hpp"
#include "cli/common.hpp"
#include "kernels/ops.hpp"

int main(int argc, char** argv) {
  if (argc >= 2 && std::string_view(argv[1]) == "serve") return minnow::cli::launch_serve(argc, argv);
  CLI::App app{"minnow: run small language models on-device, fast.\n"
               "Try:  minnow run -m models/SmolLM2-135M-Instruct.Q4_1.gguf --chat -p \"What is the capital of France?\"",
               "minnow"};
  app.require_subcommand(1);
  // The kernel table tells which SIMD level this CPU got (MINNOW_KERNELS / MINNOW_FORCE_SCALAR).
  app.set_version_flag("--version", std::string("minnow 0.1.0 (kernels: ") + minnow::kernels::active().name + ")");
  minnow::cli::register_run(app);
  minnow::cli::register_chat(app);
  minnow::cli::register_bench(app);
  minnow::cli::register_tokenize(app);
  minnow::cli::register_logits(app);
  minnow::cli::register_template(app);
  minnow::cli::register_inspect(app);
  minnow::cli::register_perplexity(app);
  minnow::cli::register_quantize(app);
  minnow::cli::register_pack(app);
  minnow::cli::register_devices(app);
  minnow::cli::register_imatrix(app);
  minnow::cli::register_embed(app);
  minnow::cli::register_onnx(app);
  minnow::cli::register_ocr(app);
  minnow::cli::register_serve_launcher(app);
  if (argc == 1) {  // a bare `minnow` teaches rather than complains
    std::cout << app.help();
    return 0;
  }
  return minnow::cli::run_cli(app, argc, argv);
}
