// minnow embed: sentence embeddings from a BERT-family model directory.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>

#include "base/error.hpp"
#include "cli/common.hpp"
#include "minnow/embed.hpp"

namespace minnow::cli {
namespace {

std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream file;
  if (path != "-") {
    file.open(path, std::ios::binary);
    if (!file) throw Error("embed: cannot open '" + path + "'");
  }
  std::istream& in = path == "-" ? std::cin : file;
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!line.empty()) lines.push_back(std::move(line));
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
    std::string model, file;
    std::vector<std::string> texts;
    int threads = 0, batch = 32;
    bool similarity = false, timing = false;
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
  cmd->add_option("-t,--threads", o->threads, "Threads (default: one per core)");
  cmd->add_option("-b,--batch", o->batch, "Texts encoded together (default 32; the result does not depend on it)")
      ->check(CLI::Range(1, 4096));
  cmd->add_flag("--similarity", o->similarity, "Print the cosine similarity of every pair of texts instead of the vectors");
  cmd->add_flag("--timing", o->timing, "Report texts/s and tokens/s on stderr");
  cmd->callback([o] {
    if (o->texts.empty() == o->file.empty()) throw CLI::ValidationError("embed", "give either TEXTS or -f FILE");
    std::vector<std::string> texts = o->file.empty() ? o->texts : read_lines(o->file);
    auto emb = Embedder::load(o->model, o->threads);
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
