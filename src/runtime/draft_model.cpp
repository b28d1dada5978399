#include "runtime/draft_model.hpp"

#include <algorithm>
#include <string>

#include "base/error.hpp"
#include "kernels/ops.hpp"

namespace minnow {

void check_draft_vocabulary(const Model& draft, const Model& model, std::string_view who) {
  if (draft.info().vocab_size != model.info().vocab_size)
    throw Error(std::string(who) + ": the draft model's vocabulary (" + std::to_string(draft.info().vocab_size) +
                " tokens) is not the model's (" + std::to_string(model.info().vocab_size) + ")");
}

int32_t confident_argmax(std::span<const float> logits, float min_p, std::vector<float>& scratch) {
  const auto top = std::max_element(logits.begin(), logits.end());
  if (min_p > 0) {  // p(top) = 1 / sum(exp(l - l_top))
    scratch.assign(logits.begin(), logits.end());
    if (kernels::active().exp_sum(scratch.data(), static_cast<int64_t>(scratch.size()), *top) * min_p > 1.0f) return -1;
  }
  return static_cast<int32_t>(top - logits.begin());
}

}  // namespace minnow
