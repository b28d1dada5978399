// `minnow serve`: hands over to the minnow-serve executable installed beside minnow.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "cli/common.hpp"

namespace minnow::cli {

void register_serve_launcher(CLI::App& app) {
  // Listed for `minnow --help`; main() hands `serve` to launch_serve before parsing.
  app.add_subcommand("serve", "OpenAI-compatible HTTP server with a web chat page (minnow serve --help)");
}

int launch_serve(int, char** argv) {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  const std::string server = (ec ? std::filesystem::path(argv[0]) : self).parent_path() / "minnow-serve";
  execv(server.c_str(), argv);  // same arguments: minnow-serve parses `serve ...` itself
  std::cerr << "minnow: cannot start " << server << ": " << std::strerror(errno) << "\n";
  return 1;
}

}  // namespace minnow::cli
