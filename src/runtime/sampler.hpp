// Turns logits into the next token: presence/frequency and repetition penalties,
// temperature, top-k, top-p, min-p (in the order Hugging Face's generate applies them),
// then a seeded draw; with a grammar, among the tokens it allows.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "grammar/token_constraint.hpp"
#include "minnow/llm.hpp"

namespace minnow {

class Sampler {
 public:
  Sampler(const SamplingOptions& o, int vocab_size);
  // logits are modified in place. `recent` are the latest tokens (for the repetition
  // penalty), `generated` the tokens sampled so far (for presence/frequency penalties).
  // With a grammar the token is one it allows: greedy takes the most likely of those; a
  // draw picks among the filters' survivors that it allows, in proportion (or, when it
  // allows none of them, from all it allows at the temperature, unfiltered). The grammar is
  // asked about the drawn token first and about the whole vocabulary only when needed.
  int32_t sample(std::span<float> logits, std::span<const int32_t> recent, std::span<const int32_t> generated = {},
                 grammar::TokenConstraint* grammar = nullptr);

 private:
  void penalize_generated(std::span<float> logits, std::span<const int32_t> generated);
  int32_t draw();  // from cand_'s probabilities
  int32_t sample_allowed(std::span<float> logits, grammar::TokenConstraint& grammar);
  double uniform();  // [0, 1), from splitmix64: identical on every platform

  SamplingOptions o_;
  uint64_t state_;
  std::vector<std::pair<float, int32_t>> cand_;  // sized once
  std::vector<uint8_t> allowed_;
};

}  // namespace minnow
