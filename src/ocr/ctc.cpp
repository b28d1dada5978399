#include "ocr/ctc.hpp"

namespace minnow::ocr {

std::vector<std::string> ctc_charset(const std::string& dict) {
  std::vector<std::string> chars{"blank"};
  size_t pos = 0;
  while (pos < dict.size()) {
    size_t end = dict.find('\n', pos);
    if (end == std::string::npos) end = dict.size();
    std::string c = dict.substr(pos, end - pos);
    if (!c.empty() && c.back() == '\r') c.pop_back();
    chars.push_back(c);
    pos = end + 1;
  }
  chars.push_back(" ");
  return chars;
}

CtcResult ctc_greedy(const float* prob, int64_t steps, int64_t classes, const std::vector<std::string>& charset) {
  CtcResult r;
  double sum = 0;
  int kept = 0;
  int64_t prev = -1;
  for (int64_t t = 0; t < steps; ++t) {
    const float* p = prob + t * classes;
    int64_t best = 0;
    for (int64_t c = 1; c < classes; ++c)
      if (p[c] > p[best]) best = c;
    if (best != 0 && best != prev && best < static_cast<int64_t>(charset.size())) {
      r.text += charset[best];
      sum += p[best];
      ++kept;
    }
    prev = best;
  }
  r.score = kept ? static_cast<float>(sum / kept) : 0.0f;
  return r;
}

}  // namespace minnow::ocr
