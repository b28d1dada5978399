#include "tokenizer/bpe.hpp"

#include <algorithm>
#include <queue>

#include "base/error.hpp"
#include "tokenizer/byte_level.hpp"
#include "tokenizer/nfc.hpp"
#include "tokenizer/utf8.hpp"

namespace minnow {
namespace {

[[noreturn]] void fail(const std::string& msg) { throw Error("tokenizer: " + msg); }

bool is_special(TokenType t) { return t == TokenType::Control || t == TokenType::UserDefined; }

// The bytes a byte-level token string stands for; characters outside the mapping are kept
// as UTF-8 (they only occur in added tokens).
std::string byte_level_decode(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    size_t n = utf8_valid_length(s, i);
    if (n == 0) {
      out += s[i++];
      continue;
    }
    int b = byte_level_byte(utf8_decode(s, i, n));
    if (b >= 0) out += static_cast<char>(b);
    else out.append(s, i, n);
    i += n;
  }
  return out;
}

// Token texts that end a turn in the chat formats minnow knows.
constexpr std::string_view kEndOfTurnTexts[] = {"<|im_end|>", "<|endoftext|>", "<|eot_id|>", "<|eom_id|>",
                                                "<end_of_turn>", "<|end|>"};

}  // namespace

BpeTokenizer::BpeTokenizer(BpeVocab vocab)
    : v_(std::move(vocab)), pre_(v_.pre_patterns.empty() ? PreTokenizer::preset(v_.pre_tokenizer) : v_.pre_patterns) {
  const size_t n = v_.tokens.size();
  if (n == 0) fail("empty vocabulary");
  if (n > (1u << 30)) fail("vocabulary too large");
  if (v_.types.empty()) v_.types.assign(n, TokenType::Normal);
  if (v_.types.size() != n) fail("token_type has " + std::to_string(v_.types.size()) + " entries for " + std::to_string(n) + " tokens");
  ids_.reserve(n);
  bytes_.resize(n);
  for (size_t i = 0; i < n; ++i) {
    ids_.emplace(v_.tokens[i], static_cast<int32_t>(i));  // first occurrence wins
    bytes_[i] = is_special(v_.types[i]) ? v_.tokens[i] : byte_level_decode(v_.tokens[i]);
    if (is_special(v_.types[i]) && !v_.tokens[i].empty()) specials_.push_back(static_cast<int32_t>(i));
  }
  std::stable_sort(specials_.begin(), specials_.end(), [&](int32_t a, int32_t b) {
    return v_.tokens[static_cast<size_t>(a)].size() > v_.tokens[static_cast<size_t>(b)].size();
  });
  const auto& chars = byte_level_chars();
  byte_chars_ = chars;
  for (int b = 0; b < 256; ++b) {
    // A vocabulary may lack a few control bytes; like Hugging Face's BPE without an unknown
    // token, such bytes are dropped.
    auto it = ids_.find(chars[static_cast<size_t>(b)]);
    byte_token_[static_cast<size_t>(b)] = it == ids_.end() ? -1 : it->second;
  }
  merges_.reserve(v_.merges.size());
  for (size_t r = 0; r < v_.merges.size(); ++r) {
    const auto& [a, b] = v_.merges[r];
    auto ia = ids_.find(a), ib = ids_.find(b), ir = ids_.find(a + b);
    if (ia == ids_.end() || ib == ids_.end() || ir == ids_.end()) continue;  // unusable merge: never fires
    merges_.emplace(pair_key(ia->second, ib->second), Merge{static_cast<int32_t>(r), ir->second});
  }
  auto check_id = [&](int32_t id, const char* what) {
    if (id >= static_cast<int32_t>(n)) fail(std::string(what) + " id " + std::to_string(id) + " is outside the vocabulary");
  };
  check_id(v_.bos_id, "BOS");
  check_id(v_.eos_id, "EOS");
  check_id(v_.eot_id, "EOT");
  bos_id_ = v_.bos_id;
  eos_id_ = v_.eos_id;
  add_bos_ = v_.add_bos && v_.bos_id >= 0;
  for (int32_t id : {v_.eos_id, v_.eot_id})
    if (id >= 0) eog_ids_.push_back(id);
  for (int32_t id : specials_)
    for (auto t : kEndOfTurnTexts)
      if (v_.tokens[static_cast<size_t>(id)] == t && !is_end_of_generation(id)) eog_ids_.push_back(id);
}

std::string_view BpeTokenizer::token_bytes(int32_t id, bool render_special) const {
  if (id < 0 || id >= vocab_size()) return {};
  if (v_.types[static_cast<size_t>(id)] == TokenType::Control && !render_special) return {};
  return bytes_[static_cast<size_t>(id)];
}

std::vector<int32_t> BpeTokenizer::encode(std::string_view text, bool parse_special) const {
  std::vector<int32_t> out;
  if (add_bos_) out.push_back(bos_id_);
  std::vector<std::string_view> words;
  std::string normalized;
  auto encode_plain = [&](std::string_view s) {
    if (s.empty()) return;
    if (v_.nfc) {
      normalized = nfc_normalize(s);
      s = normalized;
    }
    words.clear();
    pre_.split(s, words);
    for (auto w : words) encode_word(w, out);
  };
  size_t start = 0, i = 0;
  while (i < text.size()) {
    int32_t hit = -1;
    for (int32_t id : specials_) {
      if (!parse_special && v_.types[static_cast<size_t>(id)] == TokenType::Control) continue;
      const std::string& t = v_.tokens[static_cast<size_t>(id)];
      if (text.compare(i, t.size(), t) == 0) {
        hit = id;
        break;
      }
    }
    if (hit < 0) {
      ++i;
      continue;
    }
    encode_plain(text.substr(start, i - start));
    out.push_back(hit);
    i += v_.tokens[static_cast<size_t>(hit)].size();
    start = i;
  }
  encode_plain(text.substr(start));
  return out;
}

// Applies merges lowest rank first (leftmost on ties) over a linked list of symbols;
// a heap keeps long words O(n log n).
void BpeTokenizer::encode_word(std::string_view word, std::vector<int32_t>& out) const {
  if (v_.ignore_merges) {
    std::string mapped;
    for (char c : word) mapped += byte_chars_[static_cast<uint8_t>(c)];
    auto it = ids_.find(mapped);
    // Only model tokens count: Hugging Face looks the word up in the BPE vocabulary, which
    // holds no added tokens.
    if (it != ids_.end() && v_.types[static_cast<size_t>(it->second)] == TokenType::Normal) {
      out.push_back(it->second);
      return;
    }
  }
  struct Sym {
    int32_t id;
    int prev, next;
  };
  std::vector<Sym> syms(word.size());
  for (size_t k = 0; k < word.size(); ++k)
    syms[k] = {byte_token_[static_cast<uint8_t>(word[k])], static_cast<int>(k) - 1,
               k + 1 < word.size() ? static_cast<int>(k) + 1 : -1};
  struct Cand {
    int32_t rank;
    int left, right;
    int32_t left_id, right_id;
    bool operator>(const Cand& o) const { return rank != o.rank ? rank > o.rank : left > o.left; }
  };
  std::priority_queue<Cand, std::vector<Cand>, std::greater<>> heap;
  auto consider = [&](int left) {
    if (left < 0) return;
    int right = syms[static_cast<size_t>(left)].next;
    if (right < 0) return;
    auto it = merges_.find(pair_key(syms[static_cast<size_t>(left)].id, syms[static_cast<size_t>(right)].id));
    if (it != merges_.end())
      heap.push({it->second.rank, left, right, syms[static_cast<size_t>(left)].id, syms[static_cast<size_t>(right)].id});
  };
  for (size_t k = 0; k + 1 < word.size(); ++k) consider(static_cast<int>(k));
  while (!heap.empty()) {
    Cand c = heap.top();
    heap.pop();
    Sym& l = syms[static_cast<size_t>(c.left)];
    Sym& r = syms[static_cast<size_t>(c.right)];
    // Stale candidate: one side was merged away or changed since it was pushed.
    if (l.id < 0 || r.id < 0 || l.next != c.right || l.id != c.left_id || r.id != c.right_id) continue;
    l.id = merges_.at(pair_key(c.left_id, c.right_id)).result;
    l.next = r.next;
    if (r.next >= 0) syms[static_cast<size_t>(r.next)].prev = c.left;
    r.id = -1;
    consider(l.prev);
    consider(c.left);
  }
  for (int k = word.empty() ? -1 : 0; k >= 0; k = syms[static_cast<size_t>(k)].next)
    if (syms[static_cast<size_t>(k)].id >= 0) out.push_back(syms[static_cast<size_t>(k)].id);
}

}  // namespace minnow
