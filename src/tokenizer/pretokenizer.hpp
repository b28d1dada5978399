// Pre-tokenization: splits text into words before BPE, by a list of regexes applied in
// turn (each one splits every piece the previous produced; matches and the text between
// them both become pieces). The regex lists come from a named preset (tokenizer.ggml.pre)
// or are given explicitly (a tokenizer.json's own Split patterns).
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace minnow {

class PreTokenizer {
 public:
  // Throws Error if `name` is unknown.
  explicit PreTokenizer(std::string_view name);
  // PCRE2 patterns applied in order; throws Error naming a pattern that fails to compile.
  explicit PreTokenizer(const std::vector<std::string>& patterns);
  ~PreTokenizer();
  PreTokenizer(const PreTokenizer&) = delete;
  PreTokenizer& operator=(const PreTokenizer&) = delete;

  // Appends the words of text to out (views into text).
  void split(std::string_view text, std::vector<std::string_view>& out) const;

  static std::vector<std::string> known_names();
  // The patterns of a named preset; throws Error if `name` is unknown.
  static std::vector<std::string> preset(std::string_view name);

 private:
  struct Regex;
  std::vector<std::unique_ptr<Regex>> regexes_;
};

}  // namespace minnow
