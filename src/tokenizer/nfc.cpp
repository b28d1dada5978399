#include "tokenizer/nfc.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "tokenizer/nfc_tables.hpp"
#include "tokenizer/utf8.hpp"

namespace minnow {
namespace {

// Hangul syllables decompose and compose by arithmetic (Unicode ch. 3.12).
constexpr uint32_t kSBase = 0xAC00, kLBase = 0x1100, kVBase = 0x1161, kTBase = 0x11A7;
constexpr uint32_t kLCount = 19, kVCount = 21, kTCount = 28, kNCount = kVCount * kTCount, kSCount = kLCount * kNCount;

uint8_t ccc(uint32_t cp) {
  const auto* end = nfc::kCcc + nfc::kCccCount;
  const auto* it = std::lower_bound(nfc::kCcc, end, cp, [](const nfc::CccEntry& e, uint32_t c) { return e.cp < c; });
  return it != end && it->cp == cp ? it->ccc : 0;
}

void decompose(uint32_t cp, std::vector<uint32_t>& out) {
  uint32_t jamo[3];
  if (int n = hangul_decompose(cp, jamo)) {
    out.insert(out.end(), jamo, jamo + n);
    return;
  }
  const auto* end = nfc::kDecomp + nfc::kDecompCount;
  const auto* it = std::lower_bound(nfc::kDecomp, end, cp, [](const nfc::DecompEntry& e, uint32_t c) { return e.cp < c; });
  if (it == end || it->cp != cp) {
    out.push_back(cp);
    return;
  }
  decompose(it->first, out);
  if (it->second) decompose(it->second, out);
}

// The primary composite of a + b, or 0.
uint32_t compose(uint32_t a, uint32_t b) {
  if (a >= kLBase && a < kLBase + kLCount && b >= kVBase && b < kVBase + kVCount)
    return kSBase + ((a - kLBase) * kVCount + (b - kVBase)) * kTCount;
  if (a >= kSBase && a < kSBase + kSCount && (a - kSBase) % kTCount == 0 && b > kTBase && b < kTBase + kTCount)
    return a + (b - kTBase);
  const auto* end = nfc::kCompose + nfc::kComposeCount;
  const auto* it = std::lower_bound(nfc::kCompose, end, std::pair{a, b}, [](const nfc::ComposeEntry& e, std::pair<uint32_t, uint32_t> k) {
    return e.first != k.first ? e.first < k.first : e.second < k.second;
  });
  return it != end && it->first == a && it->second == b ? it->composite : 0;
}

void nfc_run(const std::vector<uint32_t>& cps, std::string& out) {
  std::vector<uint32_t> d;
  for (uint32_t cp : cps) decompose(cp, d);
  // Canonical ordering: stable sort of each run of non-starters by combining class.
  for (size_t i = 0; i < d.size();) {
    if (ccc(d[i]) == 0) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < d.size() && ccc(d[j]) != 0) ++j;
    std::stable_sort(d.begin() + static_cast<long>(i), d.begin() + static_cast<long>(j),
                     [](uint32_t a, uint32_t b) { return ccc(a) < ccc(b); });
    i = j;
  }
  // Canonical composition: each character joins the last starter unless blocked.
  std::vector<uint32_t> r;
  long starter = -1;
  int last_ccc = -1;  // class of the last character kept after the starter; -1: none yet
  for (uint32_t c : d) {
    int cc = ccc(c);
    if (starter >= 0 && (last_ccc == -1 || (last_ccc != 0 && last_ccc < cc))) {
      if (uint32_t comp = compose(r[static_cast<size_t>(starter)], c)) {
        r[static_cast<size_t>(starter)] = comp;
        continue;
      }
    }
    if (cc == 0) {
      starter = static_cast<long>(r.size());
      last_ccc = -1;
    } else {
      last_ccc = cc;
    }
    r.push_back(c);
  }
  for (uint32_t cp : r) out += utf8_encode(cp);
}

}  // namespace

int hangul_decompose(uint32_t cp, uint32_t out[3]) {
  if (cp < kSBase || cp >= kSBase + kSCount) return 0;
  const uint32_t s = cp - kSBase;
  out[0] = kLBase + s / kNCount;
  out[1] = kVBase + (s % kNCount) / kTCount;
  if (s % kTCount == 0) return 2;
  out[2] = kTBase + s % kTCount;
  return 3;
}

std::string nfc_normalize(std::string_view s) {
  // ASCII is already NFC and never composes with what follows it... except a following
  // combining mark, so only a fully ASCII string takes the fast path.
  if (std::all_of(s.begin(), s.end(), [](char c) { return static_cast<uint8_t>(c) < 0x80; })) return std::string(s);
  std::string out;
  out.reserve(s.size());
  std::vector<uint32_t> run;
  for (size_t i = 0; i < s.size();) {
    size_t n = utf8_valid_length(s, i);
    if (n == 0) {
      nfc_run(run, out);
      run.clear();
      out += s[i++];
      continue;
    }
    run.push_back(utf8_decode(s, i, n));
    i += n;
  }
  nfc_run(run, out);
  return out;
}

}  // namespace minnow
