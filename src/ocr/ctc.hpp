// CTC greedy decoding of a recognizer's per-step class probabilities.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace minnow::ocr {

struct CtcResult {
  std::string text;
  float score = 0;  // mean probability of the kept steps (0 when none)
};

// The character list of a PP-OCR recognizer: the blank, one entry per line of `dict`, a space.
std::vector<std::string> ctc_charset(const std::string& dict);
// Best class per step; repeats merged, blanks (class 0) dropped.
CtcResult ctc_greedy(const float* prob, int64_t steps, int64_t classes, const std::vector<std::string>& charset);

}  // namespace minnow::ocr
