// Small UTF-8 helpers.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace minnow {

std::string utf8_encode(uint32_t cp);

// Length of the valid UTF-8 sequence starting at s[i] (1-4), or 0 if the bytes there are
// not a complete valid sequence (invalid, or cut off by the end of s).
size_t utf8_valid_length(std::string_view s, size_t i);

// Decodes the code point of a valid sequence of length n at s[i].
uint32_t utf8_decode(std::string_view s, size_t i, size_t n);

// Expected sequence length from a lead byte (1-4), or 0 for a continuation/invalid byte.
size_t utf8_sequence_length(uint8_t lead);

}  // namespace minnow
