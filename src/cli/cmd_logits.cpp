// minnow logits: the top-K logits at every position of a token sequence, as JSON.
#include <algorithm>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/common.hpp"

namespace minnow::cli {

void register_logits(CLI::App& app) {
  struct Opts {
    ModelFlags model;
    std::string tokens, prompt;
    int top = 10;
    bool json = true;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("logits", "Print the top-K logits at every position (JSON), to check a conversion");
  add_model_flags(*cmd, o->model);
  auto* tok = cmd->add_option("--tokens", o->tokens, "Token ids, e.g. \"504 3458 314\"");
  auto* pr = cmd->add_option("-p,--prompt", o->prompt, "Text to tokenize instead of --tokens");
  tok->excludes(pr);
  cmd->add_option("--top", o->top, "How many logits per position")->capture_default_str()->check(CLI::Range(1, 1000));
  cmd->add_flag("--json", o->json, "Output JSON (the only format)");
  cmd->callback([o, tok, pr] {
    if (!*tok && !*pr) throw CLI::RequiredError("--tokens or --prompt");
    auto model = load_model_or_throw(o->model.model);
    std::vector<int32_t> ids;
    if (*tok) {
      std::istringstream in(o->tokens);
      std::string word;
      while (in >> word) {
        size_t used = 0;
        long v = -1;
        try { v = std::stol(word, &used); } catch (const std::exception&) { used = 0; }
        if (used != word.size()) throw std::runtime_error("--tokens: '" + word + "' is not a token id");
        if (v < 0 || v >= model->info().vocab_size)
          throw std::runtime_error("--tokens: id " + word + " is outside the vocabulary [0, " + std::to_string(model->info().vocab_size) + ")");
        ids.push_back(static_cast<int32_t>(v));
      }
    } else {
      ids = model->tokenize(o->prompt);
    }
    if (ids.empty()) throw std::runtime_error("no tokens given");
    Session session(*model, session_options(o->model));
    nlohmann::json positions = nlohmann::json::array();
    std::vector<int32_t> order(static_cast<size_t>(model->info().vocab_size));
    session.eval_all(ids, [&](int pos, std::span<const float> logits) {
      for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int32_t>(i);
      const size_t k = std::min(order.size(), static_cast<size_t>(o->top));
      std::partial_sort(order.begin(), order.begin() + static_cast<ptrdiff_t>(k), order.end(),
                        [&](int32_t a, int32_t b) { return logits[static_cast<size_t>(a)] > logits[static_cast<size_t>(b)]; });
      nlohmann::json top = nlohmann::json::array();
      for (size_t i = 0; i < k; ++i) top.push_back({order[i], logits[static_cast<size_t>(order[i])]});
      positions.push_back({{"pos", pos}, {"token", ids[static_cast<size_t>(pos)]}, {"top", top}});
    });
    std::cout << nlohmann::json{{"n_vocab", model->info().vocab_size}, {"positions", positions}}.dump() << "\n";
  });
}

}  // namespace minnow::cli
