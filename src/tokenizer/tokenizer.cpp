#include "tokenizer/tokenizer.hpp"

#include <algorithm>

namespace minnow {

bool Tokenizer::is_end_of_generation(int32_t id) const {
  return std::find(eog_ids_.begin(), eog_ids_.end(), id) != eog_ids_.end();
}

std::string Tokenizer::decode(const std::vector<int32_t>& ids, bool render_special) const {
  std::string out;
  for (int32_t id : ids) out += token_bytes(id, render_special);
  return out;
}

}  // namespace minnow
