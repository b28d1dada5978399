#include "tokenizer/utf8.hpp"

namespace minnow {

std::string utf8_encode(uint32_t cp) {
  std::string s;
  if (cp < 0x80) {
    s += static_cast<char>(cp);
  } else if (cp < 0x800) {
    s += static_cast<char>(0xc0 | (cp >> 6));
    s += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    s += static_cast<char>(0xe0 | (cp >> 12));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    s += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    s += static_cast<char>(0xf0 | (cp >> 18));
    s += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    s += static_cast<char>(0x80 | (cp & 0x3f));
  }
  return s;
}

size_t utf8_sequence_length(uint8_t c) {
  if (c < 0x80) return 1;
  if (c >= 0xc2 && c <= 0xdf) return 2;
  if (c >= 0xe0 && c <= 0xef) return 3;
  if (c >= 0xf0 && c <= 0xf4) return 4;
  return 0;
}

size_t utf8_valid_length(std::string_view s, size_t i) {
  auto u = [&](size_t k) { return static_cast<uint8_t>(s[k]); };
  size_t n = utf8_sequence_length(u(i));
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k)
    if ((u(i + k) & 0xc0) != 0x80) return 0;
  if (n == 3) {  // reject overlongs and surrogates
    if (u(i) == 0xe0 && u(i + 1) < 0xa0) return 0;
    if (u(i) == 0xed && u(i + 1) > 0x9f) return 0;
  }
  if (n == 4) {
    if (u(i) == 0xf0 && u(i + 1) < 0x90) return 0;
    if (u(i) == 0xf4 && u(i + 1) > 0x8f) return 0;
  }
  return n;
}

uint32_t utf8_decode(std::string_view s, size_t i, size_t n) {
  auto u = [&](size_t k) { return static_cast<uint32_t>(static_cast<uint8_t>(s[k])); };
  switch (n) {
    case 1: return u(i);
    case 2: return ((u(i) & 0x1f) << 6) | (u(i + 1) & 0x3f);
    case 3: return ((u(i) & 0x0f) << 12) | ((u(i + 1) & 0x3f) << 6) | (u(i + 2) & 0x3f);
    default: return ((u(i) & 0x07) << 18) | ((u(i + 1) & 0x3f) << 12) | ((u(i + 2) & 0x3f) << 6) | (u(i + 3) & 0x3f);
  }
}

}  // namespace minnow
