#include "tokenizer/wordpiece.hpp"

#include "base/error.hpp"
#include "tokenizer/normalizer.hpp"
#include "tokenizer/utf8.hpp"

namespace minnow {

WordPieceTokenizer::WordPieceTokenizer(WordPieceVocab vocab) : v_(std::move(vocab)), added_(v_.added, false) {
  if (v_.types.size() != v_.tokens.size()) throw Error("tokenizer: WordPiece token types and tokens differ in number");
  const auto n = static_cast<int32_t>(v_.tokens.size());
  for (int32_t id : {v_.unk_id, v_.bos_id, v_.eos_id})
    if (id >= n) throw Error("tokenizer: WordPiece special token id " + std::to_string(id) + " is out of range");
  if (v_.unk_id < 0) throw Error("tokenizer: WordPiece needs an unk_token in its vocabulary");
  if (v_.add_bos && v_.bos_id < 0) throw Error("tokenizer: WordPiece post-processor adds a token that is not in the vocabulary");
  if (v_.add_eos && v_.eos_id < 0) throw Error("tokenizer: WordPiece post-processor adds a token that is not in the vocabulary");
  for (const AddedToken& t : v_.added)
    if (t.normalized) throw Error("tokenizer: WordPiece with normalized added tokens ('" + t.content + "') is not supported");
  ids_.reserve(v_.tokens.size());
  bytes_.reserve(v_.tokens.size());
  const std::string& prefix = v_.continuing_prefix;
  for (int32_t id = 0; id < n; ++id) {
    const std::string& t = v_.tokens[static_cast<size_t>(id)];
    if (v_.types[static_cast<size_t>(id)] != TokenType::Unused) ids_.emplace(t, id);  // the first id wins
    const bool piece = !prefix.empty() && t.size() > prefix.size() && t.compare(0, prefix.size(), prefix) == 0;
    bytes_.push_back(piece ? t.substr(prefix.size()) : " " + t);
  }
  bos_id_ = v_.bos_id;
  eos_id_ = v_.eos_id;
  add_bos_ = v_.add_bos;
  if (v_.eos_id >= 0) eog_ids_.push_back(v_.eos_id);
}

int32_t WordPieceTokenizer::find(std::string_view text) const {
  auto it = ids_.find(text);
  return it == ids_.end() ? -1 : it->second;
}

void WordPieceTokenizer::encode_word(std::string_view word, std::vector<int32_t>& out, std::string& key) const {
  size_t chars = 0;
  for (size_t i = 0; i < word.size(); ++chars) {
    size_t n = utf8_valid_length(word, i);
    i += n ? n : 1;
  }
  if (chars > v_.max_input_chars_per_word) return out.push_back(v_.unk_id);
  const size_t first = out.size();
  for (size_t start = 0; start < word.size();) {
    int32_t id = -1;
    size_t end = word.size();
    for (; end > start; ) {
      std::string_view sub = word.substr(start, end - start);
      if (start > 0) {
        key.assign(v_.continuing_prefix).append(sub);
        id = find(key);
      } else {
        id = find(sub);
      }
      if (id >= 0) break;
      // Drop the last character of sub (a whole UTF-8 sequence).
      do --end;
      while (end > start && (static_cast<uint8_t>(word[end]) & 0xC0) == 0x80);
    }
    if (id < 0) {  // no piece covers what is left: the whole word is unknown
      out.resize(first);
      return out.push_back(v_.unk_id);
    }
    out.push_back(id);
    start = end;
  }
}

std::vector<int32_t> WordPieceTokenizer::encode(std::string_view text, bool parse_special) const {
  std::vector<int32_t> out;
  if (v_.add_bos) out.push_back(v_.bos_id);
  std::string normalized, key;
  std::vector<std::string_view> words;
  added_.split(
      text, parse_special,
      [&](std::string_view segment) {
        if (v_.normalize) {
          bert_normalize(segment, v_.normalizer, normalized);
          segment = normalized;
        }
        words.clear();
        if (v_.pre_tokenize) bert_pre_tokenize(segment, words);
        else words.push_back(segment);
        for (std::string_view w : words) encode_word(w, out, key);
      },
      [&](int32_t id) { out.push_back(id); });
  if (v_.add_eos) out.push_back(v_.eos_id);
  return out;
}

std::string_view WordPieceTokenizer::token_bytes(int32_t id, bool render_special) const {
  if (id < 0 || id >= vocab_size()) return {};
  if (v_.types[static_cast<size_t>(id)] == TokenType::Control && !render_special) return {};
  return bytes_[static_cast<size_t>(id)];
}

std::string WordPieceTokenizer::decode(const std::vector<int32_t>& ids, bool render_special) const {
  // The WordPiece decoder: pieces after the first lose their prefix, other tokens get a space
  // before them; then each token is cleaned up on its own, as `tokenizers` does.
  static constexpr std::pair<std::string_view, std::string_view> kCleanup[] = {
      {" .", "."}, {" ?", "?"}, {" !", "!"}, {" ,", ","}, {" ' ", "'"}, {" n't", "n't"},
      {" 'm", "'m"}, {" do not", " don't"}, {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}};
  std::string out, token;
  bool first = true;
  const std::string& prefix = v_.continuing_prefix;
  for (int32_t id : ids) {
    if (id < 0 || id >= vocab_size()) continue;
    if (v_.types[static_cast<size_t>(id)] == TokenType::Control && !render_special) continue;
    const std::string& t = v_.tokens[static_cast<size_t>(id)];
    if (first) token = t;
    else if (!prefix.empty() && t.compare(0, prefix.size(), prefix) == 0) token = t.substr(prefix.size());
    else token = " " + t;
    first = false;
    if (v_.decode_cleanup)
      for (auto [from, to] : kCleanup) token = replace_all(token, from, to);
    out += token;
  }
  return out;
}

}  // namespace minnow
