// Pre-tokenization: splits text into words before BPE, by a list of regexes applied in
// turn (each one splits every piece the previous produced; matches and the text between
// them both become pieces). The regex lists are selected by tokenizer.ggml.pre.
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
  ~PreTokenizer();
  PreTokenizer(const PreTokenizer&) = delete;
  PreTokenizer& operator=(const PreTokenizer&) = delete;

  // Appends the words of text to out (views into text).
  void split(std::string_view text, std::vector<std::string_view>& out) const;

  static std::vector<std::string> known_names();

 private:
  struct Regex;
  std::vector<std::unique_ptr<Regex>> regexes_;
};

}  // namespace minnow
