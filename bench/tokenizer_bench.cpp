// Encode throughput of a tokenizer, single thread:
//   minnow_tokenizer_bench TOKENIZER DOCS.jsonl [repetitions]
// DOCS.jsonl holds one JSON string per line. Each repetition encodes every document once;
// prints one JSON line with the median MB/s (input bytes) and tokens/s.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "minnow/tokenizer.hpp"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s TOKENIZER DOCS.jsonl [repetitions]\n", argv[0]);
    return 2;
  }
  try {
    auto tok = minnow::TextTokenizer::load(argv[1]);
    std::ifstream in(argv[2]);
    if (!in) throw std::runtime_error(std::string("cannot open ") + argv[2]);
    std::vector<std::string> docs;
    size_t bytes = 0;
    for (std::string line; std::getline(in, line);) {
      docs.push_back(nlohmann::json::parse(line).get<std::string>());
      bytes += docs.back().size();
    }
    const int reps = argc > 3 ? std::max(1, std::atoi(argv[3])) : 5;
    size_t n_tokens = 0;
    for (const auto& d : docs) n_tokens += tok->encode(d).size();  // warm-up
    std::vector<double> seconds;
    for (int r = 0; r < reps; ++r) {
      auto t0 = std::chrono::steady_clock::now();
      size_t n = 0;
      for (const auto& d : docs) n += tok->encode(d).size();
      seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      if (n != n_tokens) throw std::runtime_error("encode is not deterministic");
    }
    std::sort(seconds.begin(), seconds.end());
    const double s = seconds[seconds.size() / 2];
    std::cout << nlohmann::json{{"engine", "minnow"}, {"bytes", bytes}, {"tokens", n_tokens},
                                {"seconds", s}, {"mb_per_s", bytes / s / 1e6}, {"tokens_per_s", n_tokens / s}}
              << "\n";
  } catch (const std::exception& e) {
    std::fprintf(stderr, "minnow_tokenizer_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
