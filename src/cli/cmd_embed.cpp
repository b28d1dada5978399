// minnow embed: sentence embeddings from a BERT-family model directory.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "base/error.hpp"
#include "cli/common.hpp"
#include "minnow/embed.hpp"

namespace minnow::cli {
namespace {

// One text per line, or one JSON string per line (json_lines: texts with newlines).
std::vector<std::string> read_lines(const std::string& path, bool json_lines) {
  std::ifstream file;
  if (path != "-") {
    file.open(path, std::ios::binary);
    if (!file) throw Error("embed: cannot open '" + path + "'");
  }
  std::istream& in = path == "-" ? std::cin : file;
  std::vector<std::string> lines;
  size_t n = 0;
  for (std::string line; std::getline(in, line);) {
    ++n;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    if (!json_lines) {
      lines.push_back(std::move(line));
      continue;
    }
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_string()) throw Error("embed: line " + std::to_string(n) + " of '" + path + "' is not a JSON string");
    lines.push_back(j.get<std::string>());
  }
  return lines;
}

void print_vector(const float* v, int dim) {
  std::string line = "[";
  char buf[32];
  for (int i = 0; i < dim; ++i) {
    std::snprintf(buf, sizeof buf, i ? ",%.7g" : "%.7g", static_cast<double>(v[i]));
    line += buf;
  }
  std::cout << line << "]\n";
}

// Cosine similarity of every pair, as a table.
void print_similarity(const std::vector<float>& e, size_t n, int dim) {
  std::vector<double> norm(n);
  for (size_t i = 0; i < n; ++i) {
    double s = 0;
    for (int k = 0; k < dim; ++k) s += static_cast<double>(e[i * dim + k]) * e[i * dim + k];
    norm[i] = std::sqrt(s);
  }
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j < n; ++j) {
      double s = 0;
      for (int k = 0; k < dim; ++k) s += static_cast<double>(e[i * dim + k]) * e[j * dim + k];
      std::printf("%s%.4f", j ? " " : "", s / std::max(norm[i] * norm[j], 1e-12));
    }
    std::printf("\n");
  }
}

}  // namespace

void register_embed(CLI::App& app) {
  struct Opts {
    std::string model, file, precision = "bf16";
    std::vector<std::string> texts;
    int threads = 0, batch = 32;
    bool similarity = false, timing = false, json_lines = false;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("embed", "Print sentence embeddings of texts (BERT-family models such as all-MiniLM-L6-v2)");
  cmd->footer(
      "Prints one JSON array of floats per text, in order.\n"
      "Examples:\n"
      "  minnow embed -m models/all-MiniLM-L6-v2 \"A cat sits on the mat.\" \"A dog lies on the rug.\"\n"
      "  minnow embed -m models/all-MiniLM-L6-v2 --similarity \"tea\" \"coffee\" \"a parking ticket\"\n"
      "  minnow embed -m models/all-MiniLM-L6-v2 -f sentences.txt --timing > vectors.jsonl");
  cmd->add_option("-m,--model", o->model,
                  "Model directory: sentence-transformers or Hugging Face BERT (config.json, model.safetensors, tokenizer.json)")
      ->required();
  cmd->add_option("texts", o->texts, "Texts to embed");
  cmd->add_option("-f,--file", o->file, "Read the texts from a file, one per line (- for stdin; empty lines skipped)");
  cmd->add_flag("--json-lines", o->json_lines, "With -f: each line is a JSON string (for texts holding newlines)");
  cmd->add_option("-t,--threads", o->threads, "Threads (default: one per core)");
  cmd->add_option("-b,--batch", o->batch, "Texts encoded together (default 32; the result does not depend on it)")
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--precision", o->precision,
                  "Matrix arithmetic: bf16 (default; fast, cosine ~0.99999 to f32), f32 (exact), q8_0 (8-bit "
                  "weights, coarser)")
      ->check(CLI::IsMember({"bf16", "f32", "q8_0"}));
  cmd->add_flag("--similarity", o->similarity, "Print the cosine similarity of every pair of texts instead of the vectors");
  cmd->add_flag("--timing", o->timing, "Report texts/s and tokens/s on stderr");
  cmd->callback([o] {
    if (o->texts.empty() == o->file.empty()) throw CLI::ValidationError("embed", "give either TEXTS or -f FILE");
    std::vector<std::string> texts = o->file.empty() ? o->texts : read_lines(o->file, o->json_lines);
    EmbedderOptions opts{.n_threads = o->threads};
    if (o->precision == "f32") opts.precision = EmbedderOptions::Precision::F32;
    if (o->precision == "q8_0") opts.precision = EmbedderOptions::Precision::Q8_0;
    auto emb = Embedder::load(o->model, opts);
    const auto t0 = std::chrono::steady_clock::now();
    int64_t tokens = 0;
    std::vector<float> e = emb->embed(texts, o->batch, &tokens);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (o->similarity) {
      print_similarity(e, texts.size(), emb->dim());
    } else {
      for (size_t i = 0; i < texts.size(); ++i) print_vector(e.data() + i * static_cast<size_t>(emb->dim()), emb->dim());
    }
    if (o->timing)
      std::fprintf(stderr, "embed: %zu texts, %lld tokens in %.3f s: %.1f texts/s, %.0f tokens/s\n", texts.size(),
                   static_cast<long long>(tokens), s, static_cast<double>(texts.size()) / s, static_cast<double>(tokens) / s);
  });
}

}  // namespace minnow::cli
