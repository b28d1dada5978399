// Turns logits into the next token: presence/frequency and repetition penalties,
// temperature, top-k, top-p, min-p (in the order Hugging Face's generate applies them),
// then a seeded draw.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "minnow/llm.hpp"

namespace minnow {

class Sampler {
 public:
  Sampler(const SamplingOptions& o, int vocab_size);
  // logits are modified in place. `recent` are the latest tokens (for the repetition
  // penalty), `generated` the tokens sampled so far (for presence/frequency penalties).
  int32_t sample(std::span<float> logits, std::span<const int32_t> recent, std::span<const int32_t> generated = {});

 private:
  void penalize_generated(std::span<float> logits, std::span<const int32_t> generated);
  double uniform();  // [0, 1), from splitmix64: identical on every platform

  SamplingOptions o_;
  uint64_t state_;
  std::vector<std::pair<float, int32_t>> cand_;  // sized once
};

}  // namespace minnow
