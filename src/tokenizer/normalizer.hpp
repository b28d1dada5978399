// Text normalization applied to the text between added tokens, before pre-tokenization:
// the subset of Hugging Face normalizers that tokenizers of the supported families use.
#pragma once
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace minnow {

struct Normalizer {
  bool nfc = false;     // Unicode NFC (Qwen2/3)
  std::string prepend;  // put before any non-empty piece (Llama 2: "▁")
  std::vector<std::pair<std::string, std::string>> replace;  // literal replacements, in order (" " -> "▁")

  bool identity() const { return !nfc && prepend.empty() && replace.empty(); }
  // Normalizes s into out (which it overwrites).
  void apply(std::string_view s, std::string& out) const;
};

// Replaces every occurrence of `from` (non-empty) in s by `to`.
std::string replace_all(std::string_view s, std::string_view from, std::string_view to);

}  // namespace minnow
