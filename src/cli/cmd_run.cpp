// minnow run: generate from a prompt, streaming tokens to stdout as they come.
#include <cstdio>
#include <iostream>

#include "cli/common.hpp"

namespace minnow::cli {

void register_run(CLI::App& app) {
  struct Opts {
    ModelFlags model;
    std::string prompt;
    int n = 256;
    bool chat = false, quiet = false, ignore_eos = false;
    int lookup_draft = 0, draft_max = 8;
    float draft_min_p = 0.5f;
    std::string draft;
    SamplingOptions sampling;
    GrammarFlags grammar;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("run", "Generate text from a prompt, streaming it to stdout");
  add_model_flags(*cmd, o->model);
  cmd->add_option("-p,--prompt", o->prompt, "Prompt text")->required();
  cmd->add_option("-n,--n-predict", o->n, "Most tokens to generate")->capture_default_str()->check(CLI::NonNegativeNumber);
  cmd->add_flag("--chat", o->chat, "Wrap the prompt as a user turn in the model's chat template");
  cmd->add_flag("-q,--quiet", o->quiet, "Do not print timings to stderr");
  cmd->add_flag("--ignore-eos", o->ignore_eos, "Generate all -n tokens, past the model's end of turn (for timing)");
  add_sampling_flags(*cmd, o->sampling);
  add_grammar_flags(*cmd, o->grammar);
  cmd->add_option("--lookup-draft", o->lookup_draft,
                  "Speculative decoding by prompt lookup: check up to N tokens that followed the last few tokens "
                  "earlier in the text, in one pass (same output; faster when the answer repeats the prompt, as edits do); "
                  "0 = off")
      ->capture_default_str()
      ->check(CLI::Range(0, 64));
  cmd->add_option("--draft", o->draft,
                                "Speculative decoding with a draft model: a smaller model with the same vocabulary (e.g. "
                                "Qwen2.5-Coder-0.5B for -1.5B) proposes tokens that the model checks in one pass (same output); "
                                "with --lookup-draft, prompt lookup proposes first and the draft model where it finds nothing");
  cmd->add_option("--draft-max", o->draft_max, "Most tokens the draft model proposes per step")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  cmd->add_option("--draft-p-min", o->draft_min_p,
                  "The draft model stops proposing at a token it gives less than this probability (0: always --draft-max)")
      ->capture_default_str()
      ->check(CLI::Range(0.0f, 1.0f));
  cmd->callback([o] {
    const std::string grammar = grammar_from_flags(o->grammar);  // before loading: a bad schema fails fast
    auto model = load_model_or_throw(o->model.model);
    std::string text = o->chat ? model->apply_chat_template({{"user", o->prompt}}, true) : o->prompt;
    std::vector<int32_t> prompt = model->tokenize(text);
    if (prompt.empty()) throw std::runtime_error("the prompt is empty");
    Session session(*model, session_options(o->model));
    std::unique_ptr<Model> draft_model;
    std::unique_ptr<Session> draft_session;
    if (!o->draft.empty()) {
      draft_model = load_model_or_throw(o->draft);
      SessionOptions d = session_options(o->model);
      d.int8_decode = true;  // proposals are checked by the model: their precision only changes how many are kept
      draft_session = std::make_unique<Session>(*draft_model, d);
    }
    if (static_cast<int>(prompt.size()) >= session.context_size())
      throw std::runtime_error("the prompt has " + std::to_string(prompt.size()) + " tokens, more than fit in the context of " +
                               std::to_string(session.context_size()) + " (raise --ctx)");
    GenerateOptions g;
    g.max_tokens = o->n;
    g.sampling = o->sampling;
    g.grammar = grammar;
    g.stop_at_end_of_generation = !o->ignore_eos;
    g.lookup_draft = o->lookup_draft;
    g.draft_model = draft_session.get();
    g.draft_max = o->draft_max;
    g.draft_min_p = o->draft_min_p;
    GenerateResult r = session.generate(prompt, g, [](std::string_view piece, int32_t) {
      std::fwrite(piece.data(), 1, piece.size(), stdout);
      std::fflush(stdout);
      return true;
    });
    std::fputc('\n', stdout);
    if (!o->quiet) {
      std::fprintf(stderr, "[prompt: %d tokens, %.1f tok/s | generated: %d tokens, %.1f tok/s", r.n_prompt,
                   r.n_prompt / std::max(r.prompt_seconds, 1e-9), r.n_generated,
                   r.n_generated / std::max(r.generate_seconds, 1e-9));
      if (o->lookup_draft > 0 || draft_session)
        std::fprintf(stderr, " | drafted: %d, accepted: %d (%.0f%%)", r.n_drafted, r.n_accepted,
                     100.0 * r.n_accepted / std::max(r.n_drafted, 1));
      std::fprintf(stderr, "]\n");
    }
  });
}

}  // namespace minnow::cli
