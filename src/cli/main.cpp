// minnow command-line front end: a thin layer over the C++ API (include/minnow/llm.hpp).
#include <cstdio>
#include <iostream>

#include "base/error.hpp"
#include "cli/common.hpp"

int main(int argc, char** argv) {
  CLI::App app{"minnow: run small language models on-device, fast.\n"
               "Try:  minnow run -m models/SmolLM2-135M-Instruct.Q4_1.gguf --chat -p \"What is the capital of France?\"",
               "minnow"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "minnow 0.1.0");
  minnow::cli::register_run(app);
  minnow::cli::register_chat(app);
  minnow::cli::register_bench(app);
  minnow::cli::register_tokenize(app);
  minnow::cli::register_logits(app);
  minnow::cli::register_template(app);
  minnow::cli::register_inspect(app);
  minnow::cli::register_perplexity(app);
  minnow::cli::register_serve(app);
  if (argc == 1) {  // a bare `minnow` teaches rather than complains
    std::cout << app.help();
    return 0;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fflush(stdout);
    std::cerr << "minnow: " << e.what() << " (see --help)\n";
    return 2;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::cerr << "minnow: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
