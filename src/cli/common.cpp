#include "cli/common.hpp"

#include <cstdio>
#include <fstream>
#include <iterator>
#include <iostream>
#include <random>

#include "grammar/gbnf.hpp"
#include "minnow/error.hpp"

namespace minnow::cli {

void add_model_flags(CLI::App& app, ModelFlags& f, bool with_ctx) {
  app.add_option("-m,--model", f.model, "Model: a GGUF file or a Hugging Face checkpoint directory")->required();
  app.add_option("-t,--threads", f.threads, "Threads (default: one per core)")->check(CLI::NonNegativeNumber);
  if (with_ctx)
    app.add_option("--ctx", f.ctx, "Context size in tokens (capped by the model's trained context)")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
  app.add_flag("--int8-decode,!--no-int8-decode", f.int8_decode,
               std::string("Round activations to int8 (as llama.cpp does) instead of 15 bits in the quantized matmuls: "
                           "half the integer work, logits move by ~0.05 (default: ") +
                   (f.int8_decode ? "on)" : "off)"));
  app.add_option("--kv-type", f.kv_type,
                 "KV-cache storage: f16 (half the memory of f32), q8_0 (about a quarter; head size a multiple of 32) "
                 "or f32 (exact)")
      ->capture_default_str()
      ->check(CLI::IsMember({"f16", "q8_0", "f32"}));
  app.add_option("--backend", f.backend,
                 "Where the model runs: cpu, or vulkan (a GPU through Vulkan: the whole model and an f16 KV cache "
                 "in its memory; `minnow devices` lists them)")
      ->capture_default_str()
      ->check(CLI::IsMember({"cpu", "vulkan"}));
  app.add_option("--device", f.device, "Vulkan device index, as `minnow devices` numbers them")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--gpu-layers", f.gpu_layers,
                 "With --backend vulkan: run only the last N layers (and the output head) on the device, the rest on "
                 "the CPU (default: all; 0: none)")
      ->check(CLI::NonNegativeNumber);
}

void add_sampling_flags(CLI::App& app, SamplingOptions& s) {
  s.seed = std::random_device{}();
  app.add_option("--temp", s.temperature, "Temperature; 0 = greedy")->capture_default_str()->check(CLI::NonNegativeNumber);
  app.add_option("--top-k", s.top_k, "Keep the K most likely tokens; 0 = off")->capture_default_str()->check(CLI::NonNegativeNumber);
  app.add_option("--top-p", s.top_p, "Keep the smallest set with probability >= P; 1 = off")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--min-p", s.min_p, "Drop tokens below P x the top probability; 0 = off")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--repeat-penalty", s.repeat_penalty, "Penalty for recently seen tokens; 1 = off")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--repeat-last-n", s.repeat_last_n, "How many recent tokens the penalty sees")->capture_default_str();
  app.add_option("--seed", s.seed, "Random seed (default: random); same seed + same input = same output");
}

void add_grammar_flags(CLI::App& app, GrammarFlags& f) {
  auto* g = app.add_option("--grammar", f.grammar,
                           "Constrain the output to a GBNF grammar (llama.cpp's notation; root rule `root`), e.g. "
                           "'root ::= \"yes\" | \"no\"'");
  auto* gf = app.add_option("--grammar-file", f.grammar_file, "Read the GBNF grammar from a file");
  auto* j = app.add_option("--json-schema", f.json_schema,
                           "Constrain the output to JSON that a JSON Schema accepts, e.g. "
                           "'{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"}},\"required\":[\"city\"]}'; "
                           "'{}' for any JSON value");
  auto* jf = app.add_option("--json-schema-file", f.json_schema_file, "Read the JSON Schema from a file");
  g->excludes(gf)->excludes(j)->excludes(jf);
  gf->excludes(j)->excludes(jf);
  j->excludes(jf);
}

static std::string read_text_file(const std::string& path, const char* what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(std::string("cannot read the ") + what + " file '" + path + "'");
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string grammar_from_flags(const GrammarFlags& f) {
  std::string g = !f.grammar.empty()            ? f.grammar
                  : !f.grammar_file.empty()     ? read_text_file(f.grammar_file, "grammar")
                  : !f.json_schema.empty()      ? json_schema_to_grammar(f.json_schema)
                  : !f.json_schema_file.empty() ? json_schema_to_grammar(read_text_file(f.json_schema_file, "JSON Schema"))
                                                : std::string{};
  if (!g.empty()) grammar::parse_gbnf(g);  // checked before the model loads
  return g;
}

std::unique_ptr<Model> load_model_or_throw(const std::string& path) { return Model::load(path); }

int run_cli(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fflush(stdout);
    std::cerr << "minnow: " << e.what() << " (see --help)\n";
    return 2;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::cerr << "minnow: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

SessionOptions session_options(const ModelFlags& f) {
  SessionOptions o;
  o.ctx = f.ctx;
  o.threads = f.threads;
  o.int8_decode = f.int8_decode;
  o.kv_type = f.kv_type == "f32"    ? SessionOptions::KvType::F32
              : f.kv_type == "q8_0" ? SessionOptions::KvType::Q8_0
                                    : SessionOptions::KvType::F16;
  o.backend = f.backend == "vulkan" ? SessionOptions::Backend::Vulkan : SessionOptions::Backend::Cpu;
  o.device = f.device;
  if (f.gpu_layers >= 0 && f.backend != "vulkan") throw Error("--gpu-layers needs --backend vulkan");
  o.gpu_layers = f.gpu_layers;
  return o;
}

}  // namespace minnow::cli
