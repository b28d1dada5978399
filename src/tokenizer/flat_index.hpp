// The tokenizer's flat containers, built once per load from ~150k entries (Qwen's
// vocabulary): strings end to end in one buffer instead of a std::string each, and
// open-addressing hash tables for its two lookups (a token's text to its id, a pair of ids
// to their merge) instead of node-based maps. Building those was most of a packed model's
// load time: one flat array, no allocation per entry, a probe usually within one cache line.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace minnow {

// Many short strings end to end in one buffer: 150k std::strings cost ~5 MB in headers alone.
class TextTable {
 public:
  void push_back(std::string_view text, std::string_view more = {});  // one entry; throws Error past 4 GB
  std::string_view operator[](size_t i) const {
    const size_t begin = i ? ends_[i - 1] : 0;
    return std::string_view(text_).substr(begin, ends_[i] - begin);
  }
  size_t size() const { return ends_.size(); }
  void reserve(size_t entries) { ends_.reserve(entries); }
  void shrink_to_fit() { text_.shrink_to_fit(), ends_.shrink_to_fit(); }

 private:
  std::string text_;
  std::vector<uint32_t> ends_;
};

// BPE merges in rank order: each the text of its left and of its right token, stored joined
// (left + right is the text of the merged token) with the left part's length.
class MergeList {
 public:
  void push_back(std::string_view left, std::string_view right);  // throws Error past 4 GB
  std::string_view joined(size_t i) const { return joined_[i]; }
  std::string_view left(size_t i) const { return joined_[i].substr(0, left_size_[i]); }
  std::string_view right(size_t i) const { return joined_[i].substr(left_size_[i]); }
  size_t size() const { return left_size_.size(); }
  bool empty() const { return left_size_.empty(); }
  void reserve(size_t n) { joined_.reserve(n), left_size_.reserve(n); }

 private:
  TextTable joined_;
  std::vector<uint32_t> left_size_;
};

// Text -> id over a table kept elsewhere (it must outlive the index and not change).
class TextIndex {
 public:
  TextIndex() = default;
  // The first occurrence of a text wins, as a map's emplace would.
  explicit TextIndex(const TextTable& texts);
  int32_t find(std::string_view text) const;  // -1 when absent

 private:
  struct Slot {
    uint32_t tag;  // high bits of the hash: most misses never touch the text
    int32_t id;    // -1: empty
  };
  template <typename Equal>
  int32_t probe(uint64_t hash, Equal&& equal) const;
  std::vector<Slot> slots_;
  size_t mask_ = 0;
  const TextTable* texts_ = nullptr;
};

// (left id, right id) -> (rank, result id) of a BPE merge.
class MergeTable {
 public:
  struct Merge {
    int32_t rank = -1, result = -1;
  };
  void reserve(size_t n);  // before the first set(): the table does not grow past it
  void set(int32_t left, int32_t right, Merge m);  // replaces an earlier merge of the pair
  const Merge* find(int32_t left, int32_t right) const;  // null when absent
  bool empty() const { return size_ == 0; }

 private:
  struct Slot {
    uint64_t key;
    Merge merge;  // rank -1: empty
  };
  size_t slot_of(uint64_t key) const;  // the key's slot, or the empty one where it would go
  std::vector<Slot> slots_;
  size_t mask_ = 0, size_ = 0;
};

}  // namespace minnow
