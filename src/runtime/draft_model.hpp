// What speculative decoding with a draft model shares between a Session (run, the C++ API)
// and the server's per-slot drafter: the vocabulary check and the greedy pick that stops at
// an unsure token.
#pragma once
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "minnow/llm.hpp"

namespace minnow {

// Throws Error ("WHO: the draft model's vocabulary (N tokens) is not the model's (M)").
void check_draft_vocabulary(const Model& draft, const Model& model, std::string_view who);

// The most likely token, or -1 when its probability is below min_p (0: never -1); scratch
// is reused between calls.
int32_t confident_argmax(std::span<const float> logits, float min_p, std::vector<float>& scratch);

}  // namespace minnow
