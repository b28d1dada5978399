#include "tokenizer/bpe.hpp"

#include <algorithm>
#include <array>
#include <queue>
#include <system_error>
#include <thread>

#include "base/error.hpp"
#include "tokenizer/byte_level.hpp"
#include "tokenizer/utf8.hpp"

namespace minnow {
namespace {

[[noreturn]] void fail(const std::string& msg) { throw Error("tokenizer: " + msg); }

// Appends the bytes a byte-level token string stands for; characters outside the mapping
// are kept as UTF-8 (they only occur in added tokens).
void append_byte_level_decoded(std::string_view s, std::string& out) {
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
}

// "<0x4F>" -> 0x4F; -1 for any other text.
int byte_fallback_value(std::string_view s) {
  if (s.size() != 6 || s.substr(0, 3) != "<0x" || s[5] != '>') return -1;
  auto hex = [](char c) { return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1; };
  int hi = hex(s[3]), lo = hex(s[4]);
  return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

std::string byte_fallback_name(int b) {
  const char* digits = "0123456789ABCDEF";
  return std::string("<0x") + digits[b >> 4] + digits[b & 15] + ">";
}

// Tokens matched in normalized text are looked for in their normalized form, as
// `tokenizers` does (with Llama 2's Prepend, "ok" is looked for as "▁ok").
std::vector<AddedToken> normalize_contents(std::vector<AddedToken> added, const Normalizer& normalizer) {
  std::string out;
  for (auto& a : added)
    if (a.normalized) {
      normalizer.apply(a.content, out);
      a.content = out;
    }
  return added;
}

// Token texts that end a turn in the chat formats minnow knows.
constexpr std::string_view kEndOfTurnTexts[] = {"<|im_end|>", "<|endoftext|>", "<|eot_id|>", "<|eom_id|>",
                                                "<end_of_turn>", "<|end|>"};

}  // namespace

BpeTokenizer::BpeTokenizer(BpeVocab vocab)
    : v_(std::move(vocab)), pre_(v_.pre_splits),       raw_added_(v_.added, false),
      normalized_added_(normalize_contents(v_.added, v_.normalizer), true) {
  const size_t n = v_.tokens.size();
  if (n == 0) fail("empty vocabulary");
  if (n > (1u << 30)) fail("vocabulary too large");
  if (v_.types.empty()) v_.types.assign(n, TokenType::Normal);
  if (v_.types.size() != n) fail("token_type has " + std::to_string(v_.types.size()) + " entries for " + std::to_string(n) + " tokens");
  auto check_id = [&](int32_t id, const std::string& what) {
    if (id >= static_cast<int32_t>(n)) fail(what + " id " + std::to_string(id) + " is outside the vocabulary");
  };
  for (const auto& a : v_.added) check_id(a.id, "added token '" + a.content + "'");
  const bool byte_level = v_.symbols == BpeVocab::Symbols::ByteLevel;
  texts_.reserve(n);
  for (const std::string& t : v_.tokens) texts_.push_back(t);
  std::vector<std::string>().swap(v_.tokens);
  ids_ = TextIndex(texts_);  // first occurrence wins

  // Merges become (left, right, result) ids on up to 4 threads while this one decodes
  // the tokens' bytes: a 150k vocabulary's ~450k lookups were most of a packed model's load.
  const size_t n_merges = v_.merges.size();
  std::vector<std::array<int32_t, 3>> resolved(n_merges);
  auto resolve = [&](size_t begin, size_t end) {
    for (size_t r = begin; r < end; ++r)
      resolved[r] = {find(v_.merges.left(r)), find(v_.merges.right(r)), find(v_.merges.joined(r))};
  };
  const size_t parts = n_merges < 16384 ? 1 : std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 4);
  std::vector<size_t> inline_parts;
  {
    std::vector<std::jthread> helpers;
    for (size_t p = 1; p < parts; ++p) {
      try {
        helpers.emplace_back(resolve, n_merges * p / parts, n_merges * (p + 1) / parts);
      } catch (const std::system_error&) {  // no thread to be had: this one does it
        inline_parts.push_back(p);
      }
    }
    decode_token_bytes();
    resolve(0, n_merges / parts);
    for (size_t p : inline_parts) resolve(n_merges * p / parts, n_merges * (p + 1) / parts);
  }  // helpers join here
  merges_.reserve(n_merges);
  for (size_t r = 0; r < n_merges; ++r) {
    const auto [ia, ib, ir] = resolved[r];
    if (ia < 0 || ib < 0 || ir < 0) continue;  // unusable merge: never fires
    merges_.set(ia, ib, {static_cast<int32_t>(r), ir});  // the last one wins, as in `tokenizers`
  }
  v_.merges = MergeList();  // merges_ holds them now

  byte_chars_ = byte_level_chars();
  for (int b = 0; b < 256; ++b) {
    // A vocabulary may lack a few bytes; like Hugging Face's BPE without an unknown token,
    // such bytes are dropped.
    const int32_t id = find(byte_level ? byte_chars_[static_cast<size_t>(b)] : byte_fallback_name(b));
    byte_token_[static_cast<size_t>(b)] = !byte_level && !v_.byte_fallback ? -1 : id;
  }
  check_id(v_.bos_id, "BOS");
  check_id(v_.eos_id, "EOS");
  check_id(v_.eot_id, "EOT");
  check_id(v_.unk_id, "unknown-token");
  bos_id_ = v_.bos_id;
  eos_id_ = v_.eos_id;
  add_bos_ = v_.add_bos && v_.bos_id >= 0;
  for (int32_t id : {v_.eos_id, v_.eot_id})
    if (id >= 0) eog_ids_.push_back(id);
  for (const auto& a : v_.added)
    for (auto t : kEndOfTurnTexts)
      if (a.content == t && !is_end_of_generation(a.id)) eog_ids_.push_back(a.id);
}

int32_t BpeTokenizer::find(std::string_view text) const {
  return ids_.find(text);
}

void BpeTokenizer::decode_token_bytes() {
  const bool byte_level = v_.symbols == BpeVocab::Symbols::ByteLevel;
  const size_t n = texts_.size();
  bytes_.reserve(n);
  std::string decoded;
  for (size_t i = 0; i < n; ++i) {
    const std::string_view t = texts_[i];
    const bool added = v_.types[i] == TokenType::Control || v_.types[i] == TokenType::UserDefined;
    decoded.clear();
    if (byte_level) {
      if (added) decoded = t;
      else append_byte_level_decoded(t, decoded);
    } else if (int b = v_.byte_fallback ? byte_fallback_value(t) : -1; b >= 0) {
      decoded = static_cast<char>(b);
    } else {
      decoded = t;
      for (const auto& [from, to] : v_.decode_replace)
        if (!from.empty()) decoded = replace_all(decoded, from, to);
    }
    bytes_.push_back(decoded);
  }
  bytes_.shrink_to_fit();
}

std::string_view BpeTokenizer::token_bytes(int32_t id, bool render_special) const {
  if (id < 0 || id >= vocab_size()) return {};
  const auto i = static_cast<size_t>(id);
  if (v_.types[i] == TokenType::Control && !render_special) return {};
  return bytes_[i];
}

std::string BpeTokenizer::decode(const std::vector<int32_t>& ids, bool render_special) const {
  std::string out = Tokenizer::decode(ids, render_special);
  size_t strip = 0;
  while (strip < static_cast<size_t>(v_.strip_leading_spaces) && strip < out.size() && out[strip] == ' ') ++strip;
  return out.substr(strip);
}

std::vector<int32_t> BpeTokenizer::encode(std::string_view text, bool parse_special) const {
  std::vector<int32_t> out;
  if (add_bos_) out.push_back(bos_id_);
  std::vector<std::string_view> words;
  std::string normalized;
  auto push_token = [&](int32_t id) { out.push_back(id); };
  auto encode_normalized = [&](std::string_view s) {
    normalized_added_.split(s, parse_special, [&](std::string_view piece) { encode_piece(piece, out, words); }, push_token);
  };
  raw_added_.split(
      text, parse_special,
      [&](std::string_view segment) {
        if (v_.normalizer.identity()) return encode_normalized(segment);
        v_.normalizer.apply(segment, normalized);
        encode_normalized(normalized);
      },
      push_token);
  if (v_.add_eos && v_.eos_id >= 0) out.push_back(v_.eos_id);
  return out;
}

void BpeTokenizer::encode_piece(std::string_view piece, std::vector<int32_t>& out, std::vector<std::string_view>& words) const {
  words.clear();
  pre_.split(piece, words);
  for (auto w : words) encode_word(w, out);
}

void BpeTokenizer::encode_word(std::string_view word, std::vector<int32_t>& out) const {
  if (word.empty()) return;
  if (v_.ignore_merges) {
    int32_t id = -1;
    if (v_.symbols == BpeVocab::Symbols::ByteLevel) {
      std::string mapped;
      for (char c : word) mapped += byte_chars_[static_cast<uint8_t>(c)];
      id = find(mapped);
    } else {
      id = find(word);
    }
    // Only model tokens count: Hugging Face looks the word up in the BPE vocabulary, which
    // holds no added tokens.
    if (id >= 0 && v_.types[static_cast<size_t>(id)] == TokenType::Normal) {
      out.push_back(id);
      return;
    }
  }
  thread_local std::vector<int32_t> ids;
  initial_symbols(word, ids);
  apply_merges(ids);
  out.insert(out.end(), ids.begin(), ids.end());
}

void BpeTokenizer::initial_symbols(std::string_view word, std::vector<int32_t>& ids) const {
  ids.clear();
  if (v_.symbols == BpeVocab::Symbols::ByteLevel) {
    for (char c : word)
      if (int32_t id = byte_token_[static_cast<uint8_t>(c)]; id >= 0) ids.push_back(id);
    return;
  }
  bool pending_unk = false;  // an unknown token waits in case the next character is unknown too
  for (size_t i = 0; i < word.size();) {
    size_t len = std::max<size_t>(utf8_valid_length(word, i), 1);
    std::string_view ch = word.substr(i, len);
    i += len;
    if (int32_t id = find(ch); id >= 0) {
      if (pending_unk) ids.push_back(v_.unk_id);
      pending_unk = false;
      ids.push_back(id);
      continue;
    }
    bool all_bytes = v_.byte_fallback;
    for (char c : ch) all_bytes = all_bytes && byte_token_[static_cast<uint8_t>(c)] >= 0;
    if (all_bytes) {  // (`tokenizers` leaves a pending unknown token pending here too)
      for (char c : ch) ids.push_back(byte_token_[static_cast<uint8_t>(c)]);
      continue;
    }
    if (v_.unk_id < 0) continue;  // no unknown token: the character is dropped
    if (pending_unk && !v_.fuse_unk) ids.push_back(v_.unk_id);
    pending_unk = true;
  }
  if (pending_unk) ids.push_back(v_.unk_id);
}

// Applies merges lowest rank first (leftmost on ties) over a linked list of symbols;
// a heap keeps long words O(n log n).
void BpeTokenizer::apply_merges(std::vector<int32_t>& ids) const {
  if (ids.size() < 2 || merges_.empty()) return;
  struct Sym {
    int32_t id;
    int prev, next;
  };
  const int n = static_cast<int>(ids.size());
  thread_local std::vector<Sym> syms;
  syms.resize(ids.size());
  for (int k = 0; k < n; ++k) syms[static_cast<size_t>(k)] = {ids[static_cast<size_t>(k)], k - 1, k + 1 < n ? k + 1 : -1};
  struct Cand {
    int32_t rank;
    int left, right;
    int32_t left_id, right_id, result;
    bool operator>(const Cand& o) const { return rank != o.rank ? rank > o.rank : left > o.left; }
  };
  std::priority_queue<Cand, std::vector<Cand>, std::greater<>> heap;
  auto consider = [&](int left) {
    if (left < 0) return;
    int right = syms[static_cast<size_t>(left)].next;
    if (right < 0) return;
    int32_t a = syms[static_cast<size_t>(left)].id, b = syms[static_cast<size_t>(right)].id;
    if (const MergeTable::Merge* m = merges_.find(a, b)) heap.push({m->rank, left, right, a, b, m->result});
  };
  for (int k = 0; k + 1 < n; ++k) consider(k);
  while (!heap.empty()) {
    Cand c = heap.top();
    heap.pop();
    Sym& l = syms[static_cast<size_t>(c.left)];
    Sym& r = syms[static_cast<size_t>(c.right)];
    // Stale candidate: one side was merged away or changed since it was pushed.
    if (l.id < 0 || r.id < 0 || l.next != c.right || l.id != c.left_id || r.id != c.right_id) continue;
    l.id = c.result;
    l.next = r.next;
    if (r.next >= 0) syms[static_cast<size_t>(r.next)].prev = c.left;
    r.id = -1;
    consider(l.prev);
    consider(c.left);
  }
  ids.clear();
  for (int k = 0; k >= 0; k = syms[static_cast<size_t>(k)].next) ids.push_back(syms[static_cast<size_t>(k)].id);
}

}  // namespace minnow
