// minnow-serve: the `minnow serve` command in an executable of its own, the only one that
// links the HTTP (and, through Debian's cpp-httplib, TLS and compression) libraries.
#include "cli/common.hpp"

int main(int argc, char** argv) {
  CLI::App app{"minnow: run small language models on-device, fast.", "minnow"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "minnow 0.1.0");
  minnow::cli::register_serve(app);
  return minnow::cli::run_cli(app, argc, argv);
}
