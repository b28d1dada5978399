// Added tokens (special and user-defined) are found in the text before the model sees it,
// as Hugging Face's AddedVocabulary does: leftmost-longest matches over all of them, with
// each token's lstrip/rstrip/single_word flags applied to the match.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/function_ref.hpp"

namespace minnow {

struct AddedToken {
  int32_t id = -1;
  std::string content;
  bool special = false;      // control token: only matched when parsing specials
  bool lstrip = false;       // the match swallows whitespace on its left
  bool rstrip = false;       // ... and on its right
  bool single_word = false;  // only matched when not inside a word
  bool normalized = false;   // matched in normalized text rather than raw text
};

class AddedTokenMatcher {
 public:
  // Tokens whose `normalized` flag equals `normalized` take part; others are ignored.
  AddedTokenMatcher(const std::vector<AddedToken>& tokens, bool normalized);

  bool empty() const { return nodes_.size() == 1; }

  // Cuts text into plain pieces (passed to on_text, never empty) and matched tokens
  // (on_token), in order. Special tokens are skipped when !parse_special.
  void split(std::string_view text, bool parse_special, FunctionRef<void(std::string_view)> on_text,
             FunctionRef<void(int32_t)> on_token) const;

 private:
  struct Node {
    std::vector<std::pair<uint8_t, int32_t>> next;  // sorted by byte
    int32_t token = -1;                              // index into tokens_ when a token ends here
  };
  // Index into tokens_ of the longest token starting at text[pos], and its length.
  std::pair<int32_t, size_t> longest_at(std::string_view text, size_t pos) const;

  std::vector<AddedToken> tokens_;
  std::vector<Node> nodes_;
};

}  // namespace minnow
