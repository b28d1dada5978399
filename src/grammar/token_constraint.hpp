// Grammar-constrained generation over a tokenizer's vocabulary: which tokens may come
// next, and the state after the one that came. Tokens are byte strings that may end inside
// a UTF-8 character, so the state carries a partial character between tokens.
#pragma once
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "grammar/matcher.hpp"

namespace minnow {
class Tokenizer;
}

namespace minnow::grammar {

// The vocabulary as a byte trie (tokens with bytes; control tokens have none), built once
// per model and shared by every constraint over it.
class TokenTrie {
 public:
  explicit TokenTrie(const Tokenizer& tok);

  struct Node {
    uint32_t first_child = 0, n_children = 0;  // children are consecutive nodes
    uint32_t first_token = 0, n_tokens = 0;    // into tokens: the ids spelled by the path here
    uint8_t byte = 0;
  };
  const std::vector<Node>& nodes() const { return nodes_; }
  const std::vector<int32_t>& tokens() const { return tokens_; }
  size_t depth() const { return depth_; }  // the longest token, in bytes

 private:
  std::vector<Node> nodes_;  // [0]: the root (no byte)
  std::vector<int32_t> tokens_;
  size_t depth_ = 0;
};

class TokenConstraint {
 public:
  TokenConstraint(std::shared_ptr<const Grammar> g, std::shared_ptr<const TokenTrie> trie, const Tokenizer& tok);

  bool allows(int32_t id);
  // out[id] = 1 for every token that may come next (end-of-generation tokens once the
  // grammar is complete). If none may, the end-of-generation tokens (a forced stop).
  void allowed(std::vector<uint8_t>& out);
  // Moves past a token that allows() accepted (Error otherwise).
  void accept(int32_t id);
  bool complete() const { return partial_.need == 0 && Matcher::can_end(states_); }

 private:
  struct Partial {  // a UTF-8 character's leading bits, `need` continuation bytes to come
    uint32_t value = 0;
    uint8_t need = 0, length = 0;  // length: the whole sequence's bytes
  };
  bool step_byte(const States& in, Partial p, uint8_t b, States& out, Partial& po);
  bool walk_bytes(std::string_view bytes, States& out, Partial& po);
  void walk_trie(uint32_t node, const States& s, Partial p, size_t depth, std::vector<uint8_t>& out);

  Matcher matcher_;
  std::shared_ptr<const TokenTrie> trie_;
  const Tokenizer& tok_;
  States states_;
  Partial partial_;
  std::vector<States> scratch_;  // one per trie depth
};

}  // namespace minnow::grammar
