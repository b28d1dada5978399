// `minnow serve`: the OpenAI-compatible HTTP front end over the engine.
#pragma once
#include <cstddef>
#include <string>

#include "minnow/embed.hpp"
#include "minnow/llm.hpp"
#include "server/engine.hpp"

namespace minnow::server {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;          // 0: any free port
  std::string api_key;      // empty: no authentication
  size_t max_body = 1 << 20;
  EngineOptions engine;
};

// What the server answers with: a language model (chat, completions), an embedding model
// (/v1/embeddings), or both; clients name them by their ids.
struct ServedModels {
  const Model* model = nullptr;
  std::string model_id;
  Embedder* embedder = nullptr;
  std::string embedder_id;
};

// Serves until SIGINT or SIGTERM; prints "minnow serve: listening on http://HOST:PORT" on
// stderr once it accepts connections. Throws Error when it cannot listen.
void serve(const ServedModels& models, const ServerOptions& o);

}  // namespace minnow::server
