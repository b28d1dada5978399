#include "tokenizer/normalizer.hpp"

#include "tokenizer/nfc.hpp"

namespace minnow {

std::string replace_all(std::string_view s, std::string_view from, std::string_view to) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  for (size_t hit; (hit = s.find(from, i)) != std::string_view::npos; i = hit + from.size()) {
    out.append(s, i, hit - i);
    out += to;
  }
  out.append(s, i);
  return out;
}

void Normalizer::apply(std::string_view s, std::string& out) const {
  out = nfc ? nfc_normalize(s) : std::string(s);
  if (!prepend.empty() && !out.empty()) out.insert(0, prepend);
  for (const auto& [from, to] : replace)
    if (!from.empty()) out = replace_all(out, from, to);
}

}  // namespace minnow
