#include "tokenizer/flat_index.hpp"

#include <algorithm>
#include <bit>
#include <functional>

#include "base/error.hpp"

namespace minnow {
namespace {

// Power-of-two capacity at most ~70% full.
size_t capacity_for(size_t n) { return std::bit_ceil(std::max<size_t>(16, n + n / 2 + 1)); }

// FNV-1a.
constexpr uint64_t kFnvStart = 0xcbf29ce484222325ULL;
uint64_t more(uint64_t h, std::string_view s) {
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}

// Spreads a key's bits over the table: a pair key's low bits are the right id alone, and
// FNV's low bits are weak on short texts.
uint64_t mix(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdULL;
  k ^= k >> 33;
  return k;
}

}  // namespace

void TextTable::push_back(std::string_view text, std::string_view more) {
  if (text.size() + more.size() > UINT32_MAX - text_.size()) throw Error("tokenizer: the vocabulary's text exceeds 4 GB");
  text_.append(text).append(more);
  ends_.push_back(static_cast<uint32_t>(text_.size()));
}

void MergeList::push_back(std::string_view left, std::string_view right) {
  joined_.push_back(left, right);
  left_size_.push_back(static_cast<uint32_t>(left.size()));  // fits: joined_ checked the size
}

TextIndex::TextIndex(const TextTable& texts) : texts_(&texts) {
  slots_.assign(capacity_for(texts.size()), Slot{0, -1});
  mask_ = slots_.size() - 1;
  for (size_t id = 0; id < texts.size(); ++id) {
    const uint64_t h = mix(more(kFnvStart, texts[id]));
    const auto tag = static_cast<uint32_t>(h >> 32);
    for (size_t i = h & mask_;; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.id < 0) {
        s = {tag, static_cast<int32_t>(id)};
        break;
      }
      if (s.tag == tag && texts[static_cast<size_t>(s.id)] == texts[id]) break;  // a duplicate: the first stays
    }
  }
}

template <typename Equal>
int32_t TextIndex::probe(uint64_t h, Equal&& equal) const {
  if (slots_.empty()) return -1;
  const auto tag = static_cast<uint32_t>(h >> 32);
  for (size_t i = h & mask_;; i = (i + 1) & mask_) {
    const Slot& s = slots_[i];
    if (s.id < 0) return -1;
    if (s.tag == tag && equal((*texts_)[static_cast<size_t>(s.id)])) return s.id;
  }
}

int32_t TextIndex::find(std::string_view text) const {
  return probe(mix(more(kFnvStart, text)), [&](std::string_view t) { return t == text; });
}

void MergeTable::reserve(size_t n) {
  slots_.assign(capacity_for(n), Slot{0, {}});
  mask_ = slots_.size() - 1;
  size_ = 0;
}

size_t MergeTable::slot_of(uint64_t key) const {
  for (size_t i = mix(key) & mask_;; i = (i + 1) & mask_)
    if (slots_[i].merge.rank < 0 || slots_[i].key == key) return i;
}

void MergeTable::set(int32_t left, int32_t right, Merge m) {
  const uint64_t key = (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
  if (m.rank < 0) throw Error("tokenizer: a merge rank must not be negative");
  if ((size_ + 1) * 10 > slots_.size() * 7) throw Error("tokenizer: more merges than reserved");
  Slot& s = slots_[slot_of(key)];
  if (s.merge.rank < 0) ++size_;
  s = {key, m};
}

const MergeTable::Merge* MergeTable::find(int32_t left, int32_t right) const {
  if (size_ == 0) return nullptr;
  const uint64_t key = (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
  const Slot& s = slots_[slot_of(key)];
  return s.merge.rank < 0 ? nullptr : &s.merge;
}

}  // namespace minnow
