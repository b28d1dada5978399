#include "tokenizer/sentencepiece_merges.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string_view>
#include <unordered_map>

#include "tokenizer/utf8.hpp"

namespace minnow {

MergeList merges_from_scores(const std::vector<std::string>& pieces,
                                                                    const std::vector<float>& scores,
                                                                    const std::vector<TokenType>& types) {
  std::unordered_map<std::string_view, int32_t> id_of;
  id_of.reserve(pieces.size());
  for (size_t i = 0; i < pieces.size(); ++i) id_of.emplace(pieces[i], static_cast<int32_t>(i));

  struct Candidate {
    float score;
    int32_t left_chars, right_chars, left, right;
    uint32_t split;  // byte offset of the split in the piece
    int32_t piece;
  };
  std::vector<Candidate> all;
  std::vector<size_t> char_starts;
  for (size_t i = 0; i < pieces.size(); ++i) {
    std::string_view p = pieces[i];
    char_starts.clear();
    for (size_t k = 0; k < p.size(); k += std::max<size_t>(utf8_valid_length(p, k), 1)) char_starts.push_back(k);
    const size_t first = all.size();
    float score = i < types.size() && types[i] == TokenType::UserDefined ? 0.0f : scores[i];
    if (std::isnan(score)) score = -std::numeric_limits<float>::infinity();  // keeps the sort's ordering strict
    const auto nchars = static_cast<int32_t>(char_starts.size());
    for (int32_t c = 1; c < nchars; ++c) {
      size_t at = char_starts[static_cast<size_t>(c)];
      auto l = id_of.find(p.substr(0, at)), r = id_of.find(p.substr(at));
      if (l == id_of.end() || r == id_of.end()) continue;
      all.push_back({score, c, nchars - c, l->second, r->second, static_cast<uint32_t>(at), static_cast<int32_t>(i)});
    }
    std::sort(all.begin() + static_cast<std::ptrdiff_t>(first), all.end(), [](const Candidate& a, const Candidate& b) {
      return a.left != b.left ? a.left < b.left : a.right < b.right;
    });
  }
  std::stable_sort(all.begin(), all.end(), [](const Candidate& a, const Candidate& b) {
    if (a.score != b.score) return a.score > b.score;
    if (a.left_chars != b.left_chars) return a.left_chars > b.left_chars;
    return a.right_chars > b.right_chars;
  });
  MergeList merges;
  merges.reserve(all.size());
  for (const auto& c : all) {
    const std::string_view p = pieces[static_cast<size_t>(c.piece)];
    merges.push_back(p.substr(0, c.split), p.substr(c.split));
  }
  return merges;
}

}  // namespace minnow
