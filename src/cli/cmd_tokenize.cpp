// minnow tokenize: print the token ids of a text, or of many (one JSON string per line).
#include <iostream>
#include <nlohmann/json.hpp>

#include "base/error.hpp"
#include "cli/common.hpp"
#include "minnow/tokenizer.hpp"

namespace minnow::cli {
namespace {

using nlohmann::json;

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

// One input per line, each a JSON string; prints per line the ids and their decoding with
// special tokens rendered ("text") and skipped ("plain").
void tokenize_lines(const TextTokenizer& tok, bool parse_special) {
  std::string line;
  for (size_t n = 1; std::getline(std::cin, line); ++n) {
    json in;
    try {
      in = json::parse(line);
    } catch (const json::exception&) {
      throw Error("tokenize: line " + std::to_string(n) + " of the input is not valid JSON");
    }
    if (!in.is_string()) throw Error("tokenize: line " + std::to_string(n) + " of the input is not a JSON string");
    auto ids = tok.encode(in.get_ref<const std::string&>(), parse_special);
    std::cout << dump(json{{"ids", ids}, {"text", tok.decode(ids, true)}, {"plain", tok.decode(ids, false)}}) << "\n";
  }
}

}  // namespace

void register_tokenize(CLI::App& app) {
  struct Opts {
    std::string model, tokenizer, text;
    bool json = false, no_special = false, lines = false;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("tokenize", "Print the token ids of TEXT");
  cmd->footer(
      "Examples:\n"
      "  minnow tokenize -m models/SmolLM2-135M-Instruct.Q4_1.gguf \"Hello world\"\n"
      "  minnow tokenize --tokenizer path/to/tokenizer.json --json \"<|im_start|>user\"\n"
      "  printf '\"one\"\\n\"two\"\\n' | minnow tokenize --tokenizer path/to/tokenizer.json --lines");
  auto* m = cmd->add_option("-m,--model", o->model, "Model file (GGUF); only its tokenizer is read");
  auto* t = cmd->add_option("--tokenizer", o->tokenizer, "A tokenizer.json (or its directory) or a GGUF file");
  m->excludes(t);
  auto* text = cmd->add_option("text", o->text, "Text to tokenize");
  cmd->add_flag("--json", o->json, "Print {\"ids\": [...], \"pieces\": [...]} instead of plain ids");
  cmd->add_flag("--lines", o->lines,
                "Read one JSON string per line from stdin; print {\"ids\", \"text\", \"plain\"} per line "
                "(text: decoded with special tokens, plain: without)");
  cmd->add_flag("--no-parse-special", o->no_special, "Treat special-token text such as <|im_start|> as plain text");
  cmd->callback([o, text] {
    if (o->model.empty() && o->tokenizer.empty()) throw CLI::ValidationError("tokenize", "give -m MODEL or --tokenizer PATH");
    if (o->lines == (text->count() > 0)) throw CLI::ValidationError("tokenize", "give either TEXT or --lines");
    auto tok = TextTokenizer::load(o->model.empty() ? o->tokenizer : o->model);
    if (o->lines) return tokenize_lines(*tok, !o->no_special);
    std::vector<int32_t> ids = tok->encode(o->text, !o->no_special);
    if (o->json) {
      json pieces = json::array();
      for (int32_t id : ids) pieces.push_back(tok->token_text(id));
      std::cout << dump(json{{"ids", ids}, {"pieces", pieces}}) << "\n";
    } else {
      for (size_t i = 0; i < ids.size(); ++i) std::cout << (i ? " " : "") << ids[i];
      std::cout << "\n";
    }
  });
}

}  // namespace minnow::cli
