// Pre-tokenization: splits text into words before BPE, by a list of regexes applied in
// turn (each one splits every piece the previous produced). An Isolated split makes
// matches and the text between them separate pieces; MergedWithPrevious glues a match to
// the text before it. The regex lists come from a named preset (tokenizer.ggml.pre) or
// are given explicitly (a tokenizer.json's own Split patterns). No splits: one word.
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace minnow {

struct PreSplit {
  enum class Behavior { Isolated, MergedWithPrevious };
  std::string regex;  // PCRE2 syntax
  Behavior behavior = Behavior::Isolated;
};

class PreTokenizer {
 public:
  // Splits applied in order; throws Error naming a pattern that fails to compile.
  explicit PreTokenizer(const std::vector<PreSplit>& splits);
  ~PreTokenizer();
  PreTokenizer(const PreTokenizer&) = delete;
  PreTokenizer& operator=(const PreTokenizer&) = delete;

  // Appends the words of text to out (views into text).
  void split(std::string_view text, std::vector<std::string_view>& out) const;

  static std::vector<std::string> known_names();
  // The splits of a named preset; throws Error if `name` is unknown.
  static std::vector<PreSplit> preset(std::string_view name);

 private:
  struct Regex;
  std::vector<std::unique_ptr<Regex>> regexes_;
};

}  // namespace minnow
