// A SentencePiece BPE model stores piece scores, not merges. This derives the merge list
// Hugging Face's converter derives from the same pieces, so a GGUF "llama" tokenizer
// encodes exactly as the model's tokenizer.json does.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "tokenizer/flat_index.hpp"
#include "tokenizer/tokenizer.hpp"

namespace minnow {

// Every split of a piece into two pieces of the vocabulary is a merge. Merges are ranked by
// the score of the piece they make (user-defined pieces count as score 0, as SentencePiece
// scores them), then by the length in characters of the left and right part (longer
// first), then by piece id, left id and right id.
MergeList merges_from_scores(const std::vector<std::string>& pieces, const std::vector<float>& scores,
                             const std::vector<TokenType>& types);

}  // namespace minnow
