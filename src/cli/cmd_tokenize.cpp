// minnow tokenize: print the token ids of a text.
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/common.hpp"

namespace minnow::cli {

void register_tokenize(CLI::App& app) {
  struct Opts {
    std::string model, text;
    bool json = false, no_special = false;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("tokenize", "Print the token ids of TEXT");
  cmd->add_option("-m,--model", o->model, "Model file (GGUF)")->required();
  cmd->add_option("text", o->text, "Text to tokenize")->required();
  cmd->add_flag("--json", o->json, "Print {\"ids\": [...], \"pieces\": [...]} instead of plain ids");
  cmd->add_flag("--no-parse-special", o->no_special, "Treat special-token text such as <|im_start|> as plain text");
  cmd->callback([o] {
    auto model = load_model_or_throw(o->model);
    std::vector<int32_t> ids = model->tokenize(o->text, !o->no_special);
    if (o->json) {
      nlohmann::json pieces = nlohmann::json::array();
      for (int32_t id : ids) pieces.push_back(model->token_text(id));
      std::cout << nlohmann::json{{"ids", ids}, {"pieces", pieces}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    } else {
      for (size_t i = 0; i < ids.size(); ++i) std::cout << (i ? " " : "") << ids[i];
      std::cout << "\n";
    }
  });
}

}  // namespace minnow::cli
