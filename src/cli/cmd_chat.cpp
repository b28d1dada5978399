// minnow chat: interactive multi-turn chat. Each turn re-renders the conversation with the
// model's template; the session reuses the KV cache of the common prefix, so only the new
// turn is prefilled. Ctrl-C stops the current reply, Ctrl-D exits.
#include <signal.h>

#include <atomic>
#include <cstdio>
#include <iostream>

#include "cli/common.hpp"

namespace minnow::cli {
namespace {

std::atomic<Session*> g_active{nullptr};

extern "C" void on_sigint(int) {
  if (Session* s = g_active.load()) s->cancel();
}

}  // namespace

void register_chat(CLI::App& app) {
  struct Opts {
    ModelFlags model;
    std::string system;
    int n = 1024;
    SamplingOptions sampling;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("chat", "Interactive chat (Ctrl-C stops a reply, Ctrl-D exits, /reset clears)");
  add_model_flags(*cmd, o->model);
  cmd->add_option("-s,--system", o->system, "System prompt (default: the template's own, if any)");
  cmd->add_option("-n,--n-predict", o->n, "Most tokens per reply")->capture_default_str()->check(CLI::PositiveNumber);
  add_sampling_flags(*cmd, o->sampling);
  cmd->callback([o] {
    auto model = load_model_or_throw(o->model.model);
    if (!model->has_chat_template()) throw std::runtime_error("the model has no chat template; use 'minnow run'");
    Session session(*model, session_options(o->model));
    struct sigaction sa {};
    sa.sa_handler = on_sigint;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGINT, &sa, nullptr);

    std::vector<ChatMessage> messages;
    if (!o->system.empty()) messages.push_back({"system", o->system});
    const size_t n_fixed = messages.size();
    std::fprintf(stderr, "minnow chat: %s. Ctrl-C stops a reply, Ctrl-D exits, /reset starts over.\n",
                 model->info().name.c_str());
    std::string line;
    for (;;) {
      std::fputs("> ", stdout);
      std::fflush(stdout);
      if (!std::getline(std::cin, line)) break;
      if (line.empty()) continue;
      if (line == "/reset") {
        messages.resize(n_fixed);
        session.reset();
        continue;
      }
      messages.push_back({"user", line});
      std::vector<int32_t> prompt = model->tokenize(model->apply_chat_template(messages, true));
      if (static_cast<int>(prompt.size()) >= session.context_size()) {
        std::fprintf(stderr, "minnow: the conversation no longer fits in the context (%d tokens); /reset to start over\n",
                     session.context_size());
        messages.pop_back();
        continue;
      }
      GenerateOptions g;
      g.max_tokens = o->n;
      g.sampling = o->sampling;
      g.sampling.seed += messages.size();  // a different draw per turn, still reproducible
      std::string reply;
      g_active.store(&session);
      GenerateResult r = session.generate(prompt, g, [&](std::string_view piece, int32_t) {
        reply += piece;
        std::fwrite(piece.data(), 1, piece.size(), stdout);
        std::fflush(stdout);
        return true;
      });
      g_active.store(nullptr);
      std::fputc('\n', stdout);
      if (r.stop == GenerateResult::Stop::Cancelled) std::fputs("[stopped]\n", stderr);
      if (r.stop == GenerateResult::Stop::ContextFull) std::fputs("[context full; /reset to start over]\n", stderr);
      messages.push_back({"assistant", reply});
    }
    std::fputc('\n', stdout);
  });
}

}  // namespace minnow::cli
