// minnow serve: the OpenAI-compatible HTTP server with the web chat page.
#include <filesystem>
#include <fstream>
#include <iterator>

#include "cli/common.hpp"
#include "server/http_server.hpp"

namespace minnow::cli {

namespace {
// What clients put in "model": the file name without .gguf, or the checkpoint directory's name.
std::string model_id(const std::string& path) {
  std::filesystem::path p(path);
  if (!p.has_filename()) p = p.parent_path();
  return p.extension() == ".gguf" ? p.stem().string() : p.filename().string();
}
}  // namespace

void register_serve(CLI::App& app) {
  struct Opts {
    ModelFlags model;
    server::ServerOptions server;
    std::string chat_template_file, embedding_model, embedding_precision = "bf16", draft;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand(
      "serve",
      "Serve the model over HTTP: the OpenAI API (/v1/chat/completions, /v1/completions, /v1/embeddings,\n"
      "/v1/models), /health, /metrics, and a web chat page at /.\n"
      "Examples:\n"
      "  minnow serve -m models/SmolLM2-135M-Instruct.Q4_1.gguf   then open http://127.0.0.1:8080/\n"
      "  minnow serve --embedding-model models/all-MiniLM-L6-v2   (embeddings only)");
  add_model_flags(*cmd, o->model, false);
  cmd->get_option("--model")->required(false)->description(
      "Language model: a GGUF file or a Hugging Face checkpoint directory (optional with --embedding-model)");
  cmd->add_option("--embedding-model", o->embedding_model,
                  "A sentence-embedding model directory (e.g. all-MiniLM-L6-v2) to serve at /v1/embeddings");
  cmd->add_option("--embedding-precision", o->embedding_precision, "The embedding model's arithmetic: bf16, f32, q8_0 (see minnow embed --help)")
      ->capture_default_str()
      ->check(CLI::IsMember({"bf16", "f32", "q8_0"}));
  auto& s = o->server;
  cmd->add_option("--host", s.host, "Address to bind (loopback by default; 0.0.0.0 exposes the server to the network)")
      ->capture_default_str();
  cmd->add_option("--port", s.port, "TCP port; 0 picks a free one")->capture_default_str()->check(CLI::Range(0, 65535));
  cmd->add_option("--parallel", s.engine.parallel, "Slots: requests generated at once (on the CPU batched into one forward pass; a Vulkan device runs them in turn)")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  cmd->add_option("--ctx", s.engine.ctx, "Context (KV cache) per slot in tokens, capped by the model's trained context")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--queue", s.engine.queue, "Requests that may wait for a free slot; beyond that the server answers 503")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--api-key", s.api_key, "Require 'Authorization: Bearer KEY' on /v1/ endpoints");
  cmd->add_option("--max-body", s.max_body, "Largest request body in bytes (413 beyond)")->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--prefill-chunk", s.engine.prefill_chunk, "Prompt tokens per step while other requests generate")
      ->capture_default_str()
      ->check(CLI::Range(1, 512));
  cmd->add_option("--lookup-draft", s.engine.lookup_draft,
                  "Speculative decoding by prompt lookup: up to N tokens copied from the context checked per step, "
                  "the output unchanged (requests may set \"lookup_draft\"; CPU backend; 0: off)")
      ->capture_default_str()
      ->check(CLI::Range(0, server::kMaxLookupDraft));
  cmd->add_option("--draft", o->draft,
                  "Speculative decoding with a draft model for every request: a smaller model with the same vocabulary "
                  "(e.g. Qwen2.5-Coder-0.5B for -1.5B), the output unchanged (a request's \"lookup_draft\" overrides it; "
                  "with --lookup-draft, prompt lookup proposes first and the draft model where it finds nothing; CPU backend)");
  cmd->add_option("--draft-max", s.engine.draft_max, "Most tokens the draft model proposes per step")
      ->capture_default_str()
      ->check(CLI::Range(1, server::kMaxLookupDraft));
  cmd->add_option("--draft-p-min", s.engine.draft_min_p,
                  "The draft model stops proposing at a token it gives less than this probability (0: always --draft-max)")
      ->capture_default_str()
      ->check(CLI::Range(0.0f, 1.0f));
  cmd->add_option("--chat-template-file", o->chat_template_file,
                  "A Jinja chat template to use instead of the model's own (e.g. one that takes tools)");
  cmd->callback([o] {
    if (o->model.model.empty() && o->embedding_model.empty())
      throw CLI::ValidationError("serve", "give -m MODEL, --embedding-model DIR, or both");
    const SessionOptions session = session_options(o->model);  // checks the flags before the model loads
    std::string chat_template;
    if (!o->chat_template_file.empty()) {
      std::ifstream in(o->chat_template_file, std::ios::binary);
      if (!in) throw std::runtime_error("cannot read the chat template file '" + o->chat_template_file + "'");
      chat_template.assign(std::istreambuf_iterator<char>(in), {});
    }
    std::unique_ptr<Model> model;
    if (!o->model.model.empty()) {
      model = load_model_or_throw(o->model.model);
      if (!o->chat_template_file.empty()) model->set_chat_template(std::move(chat_template));
    }
    std::unique_ptr<Model> draft;
    if (!o->draft.empty()) {
      if (!model) throw CLI::ValidationError("serve", "--draft needs -m MODEL");
      draft = load_model_or_throw(o->draft);
    }
    std::unique_ptr<Embedder> embedder;
    if (!o->embedding_model.empty()) {
      EmbedderOptions eo{.n_threads = o->model.threads};
      if (o->embedding_precision == "f32") eo.precision = EmbedderOptions::Precision::F32;
      if (o->embedding_precision == "q8_0") eo.precision = EmbedderOptions::Precision::Q8_0;
      embedder = Embedder::load(o->embedding_model, eo);
    }
    server::ServerOptions s = o->server;
    s.engine.threads = o->model.threads;
    s.engine.kv_type = session.kv_type;
    s.engine.int8_decode = o->model.int8_decode;
    s.engine.backend = session.backend;
    s.engine.device = session.device;
    s.engine.gpu_layers = session.gpu_layers;
    s.engine.draft_model = draft.get();
    server::ServedModels served;
    if (model) {
      served.model = model.get();
      served.model_id = model_id(o->model.model);
    }
    if (embedder) {
      served.embedder = embedder.get();
      served.embedder_id = model_id(o->embedding_model);
    }
    server::serve(served, s);
  });
}

}  // namespace minnow::cli
