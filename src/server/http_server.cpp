#include "server/http_server.hpp"

#include <httplib.h>
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <thread>

#include "base/error.hpp"
#include "server/embeddings_api.hpp"
#include "server/metrics.hpp"
#include "server/openai_api.hpp"
#include "server/web_page.hpp"

namespace minnow::server {
namespace {

using namespace std::chrono_literals;

void send_error(httplib::Response& res, const ApiError& e) {
  res.status = e.status;
  res.set_content(error_body(e), "application/json");
}

// Error statuses httplib produces itself (no route, body too large, unreadable request),
// given an OpenAI-style body.
void fill_error_body(const httplib::Request& req, httplib::Response& res) {
  if (!res.body.empty()) return;  // one of ours, already filled in
  switch (res.status) {
    case 404: send_error(res, ApiError(404, "invalid_request_error", "not_found", "", "no such endpoint: " + req.method + " " + req.path)); break;
    case 413: send_error(res, ApiError(413, "invalid_request_error", "request_too_large", "", "the request body is larger than the server accepts (--max-body)")); break;
    default:
      send_error(res, ApiError(res.status, res.status >= 500 ? "server_error" : "invalid_request_error", "", "",
                               "the request could not be handled (HTTP " + std::to_string(res.status) + ")"));
  }
}

struct Server {
  const ServedModels& models;
  const ServerOptions& o;
  Engine* engine;  // null: no language model
  std::mutex embed_mutex;  // an Embedder runs one request at a time
  std::atomic<bool>& stopping;
  std::atomic<uint64_t> requests{0}, errors{0};
  int64_t started = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();

  // Checked in the handlers, after httplib has read the body: a request refused before its
  // body is read would leave that body in the connection, to be parsed as the next request.
  bool authorized(const httplib::Request& req, httplib::Response& res) const {
    if (o.api_key.empty() || req.get_header_value("Authorization") == "Bearer " + o.api_key) return true;
    const bool missing = !req.has_header("Authorization");
    send_error(res, ApiError(401, "invalid_request_error", "invalid_api_key", "",
                             missing ? "missing API key: send it as 'Authorization: Bearer KEY'" : "incorrect API key"));
    return false;
  }

  void embeddings(const httplib::Request& req, httplib::Response& res) {
    if (!authorized(req, res)) return;
    Embedder* e = models.embedder;
    if (!e)
      return send_error(res, ApiError(404, "invalid_request_error", "model_not_found", "model",
                                      "this server has no embedding model (start it with --embedding-model DIR)"));
    try {
      const EmbeddingRequest r = parse_embedding_request(req.body, models.embedder_id, e->dim(), e->vocab_size());
      int64_t tokens = 0;
      std::vector<float> v;
      {
        std::lock_guard<std::mutex> lock(embed_mutex);
        v = r.ids.empty() ? e->embed(r.texts, 32, &tokens) : e->embed_tokens(r.ids, 32, &tokens);
      }
      res.set_content(embedding_response(v, e->dim(), r.base64, models.embedder_id, tokens), "application/json");
    } catch (const ApiError& err) {
      send_error(res, err);
    } catch (const std::exception& err) {
      std::fprintf(stderr, "minnow serve: %s %s failed: %s\n", req.method.c_str(), req.path.c_str(), err.what());
      send_error(res, ApiError(500, "server_error", "internal_error", "", err.what()));
    }
  }

  void completion(Endpoint ep, const httplib::Request& req, httplib::Response& res) {
    if (!authorized(req, res)) return;
    if (!engine)
      return send_error(res, ApiError(404, "invalid_request_error", "model_not_found", "model",
                                      "this server has no language model, only /v1/embeddings (start it with -m MODEL)"));
    const Model& model = *models.model;
    const std::string& model_id = models.model_id;
    std::shared_ptr<Job> job;
    ParsedRequest p;
    try {
      p = parse_request(ep, req.body, model, model_id, engine->context_size());
      job = engine->submit(std::move(p.completion));
    } catch (const ApiError& e) {
      return send_error(res, e);
    } catch (const QueueFull& e) {
      return send_error(res, ApiError(503, "server_error", "queue_full", "", e.what()));
    } catch (const std::exception& e) {  // a bug, not the client's fault: say what it was
      std::fprintf(stderr, "minnow serve: %s %s failed: %s\n", req.method.c_str(), req.path.c_str(), e.what());
      return send_error(res, ApiError(500, "server_error", "internal_error", "", e.what()));
    }
    const ResponseFormat fmt(ep, model_id);
    if (!p.stream) {
      std::string text;
      Job::Update u;
      for (;;) {
        if (stopping.load()) {
          job->cancel();
          return send_error(res, ApiError(503, "server_error", "shutting_down", "", "the server is shutting down"));
        }
        if (!job->wait(u, 100ms)) continue;
        text += u.text;
        if (u.finish != Finish::Running) break;
      }
      res.set_content(fmt.full(text, u.finish, u.prompt_tokens, u.completion_tokens, p.tool_calls ? &p.tools : nullptr), "application/json");
      return;
    }
    res.set_header("Cache-Control", "no-cache");
    const bool usage = p.include_usage;
    std::atomic<bool>* stop_flag = &stopping;
    // With tools, text from a "<tool_call>" on is held and sent as tool_calls at the end.
    auto calls = p.tool_calls ? std::make_shared<ToolCallStream>() : nullptr;
    auto tools = std::make_shared<const nlohmann::ordered_json>(std::move(p.tools));
    res.set_chunked_content_provider(
        "text/event-stream",
        [job, fmt, usage, stop_flag, calls, tools](size_t, httplib::DataSink& sink) {
          auto send = [&](const std::string& data) {
            const std::string event = "data: " + data + "\n\n";
            return sink.write(event.data(), event.size());
          };
          if (!fmt.first_chunk(usage).empty() && !send(fmt.first_chunk(usage))) return false;
          Job::Update u;
          for (;;) {
            if (stop_flag->load()) return false;
            if (!job->wait(u, 100ms)) continue;
            // A failed write means the client left: the releaser cancels the job.
            const std::string text = calls ? calls->push(u.text) : u.text;
            if (!text.empty() && !send(fmt.text_chunk(text, usage))) return false;
            if (u.finish != Finish::Running) break;
          }
          bool called = false;
          if (calls && !calls->held().empty()) {
            ToolReply r = split_tool_calls(calls->held(), *tools);
            called = !r.calls.empty();
            const std::string rest = called ? r.content : calls->held();
            if (!rest.empty() && !send(fmt.text_chunk(rest, usage))) return false;
            if (called && !send(fmt.tool_calls_chunk(r.calls, usage))) return false;
          }
          if (!send(fmt.finish_chunk(u.finish, usage, called))) return false;
          if (usage && !send(fmt.usage_chunk(u.prompt_tokens, u.completion_tokens))) return false;
          if (!send("[DONE]")) return false;
          sink.done();
          return true;
        },
        [job](bool success) {
          if (!success) job->cancel();
        });
  }

  void routes(httplib::Server& svr) {
    svr.Get("/", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(std::string(web_page_html()), "text/html; charset=utf-8");
    });
    svr.Get("/health", [](const httplib::Request&, httplib::Response& res) { res.set_content(R"({"status":"ok"})", "application/json"); });
    svr.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
      res.set_content(prometheus_text(engine ? engine->stats() : EngineStats{}, {requests.load(), errors.load()}),
                      "text/plain; version=0.0.4");
    });
    svr.Get("/v1/models", [this](const httplib::Request& req, httplib::Response& res) {
      if (!authorized(req, res)) return;
      nlohmann::ordered_json data = nlohmann::ordered_json::array();
      for (const std::string* id : {models.model ? &models.model_id : nullptr, models.embedder ? &models.embedder_id : nullptr})
        if (id) data.push_back({{"id", *id}, {"object", "model"}, {"created", started}, {"owned_by", "minnow"}});
      res.set_content(nlohmann::ordered_json{{"object", "list"}, {"data", data}}.dump(), "application/json");
    });
    svr.Post("/v1/embeddings", [this](const httplib::Request& req, httplib::Response& res) { embeddings(req, res); });
    svr.Post("/v1/chat/completions", [this](const httplib::Request& req, httplib::Response& res) { completion(Endpoint::Chat, req, res); });
    svr.Post("/v1/completions", [this](const httplib::Request& req, httplib::Response& res) { completion(Endpoint::Completion, req, res); });
    svr.set_error_handler(fill_error_body);
    svr.set_logger([this](const httplib::Request&, const httplib::Response& res) {
      ++requests;
      if (res.status >= 400) ++errors;
    });
  }
};

}  // namespace

void serve(const ServedModels& models, const ServerOptions& o) {
  // SIGINT/SIGTERM go to one waiting thread (every thread started below inherits the mask).
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);  // a vanished client is a failed write, not a dead server

  std::unique_ptr<Engine> engine = models.model ? std::make_unique<Engine>(*models.model, o.engine) : nullptr;
  std::atomic<bool> stopping{false};
  httplib::Server svr;
  Server handlers{models, o, engine.get(), {}, stopping};
  // Every waiting or streaming request holds a thread while the engine works for it.
  const int threads = std::clamp(o.engine.parallel + o.engine.queue + 8, 16, 1024);
  svr.new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<size_t>(threads)); };
  svr.set_payload_max_length(o.max_body);
  handlers.routes(svr);

  const int port = o.port == 0 ? svr.bind_to_any_port(o.host) : (svr.bind_to_port(o.host, o.port) ? o.port : -1);
  if (port < 0)
    throw Error("serve: cannot listen on " + o.host + ":" + std::to_string(o.port) + " (address in use or not available?)");
  std::thread([&svr, &stopping, signals] {
    int sig = 0;
    sigwait(&signals, &sig);
    stopping.store(true);
    svr.stop();
  }).detach();
  std::fprintf(stderr, "minnow serve: listening on http://%s:%d\n", o.host.c_str(), port);
  std::fflush(stderr);
  svr.listen_after_bind();
  std::fprintf(stderr, "minnow serve: stopped\n");
}

}  // namespace minnow::server
