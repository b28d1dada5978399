// Unicode Normalization Form C, for tokenizer.json normalizers (Qwen uses NFC).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace minnow {

// NFC of the valid UTF-8 runs of s; invalid bytes are copied through and act as boundaries.
std::string nfc_normalize(std::string_view s);

// A Hangul syllable's canonical decomposition into 2 or 3 jamo (written to out), by
// arithmetic; 0 for any other code point.
int hangul_decompose(uint32_t cp, uint32_t out[3]);

}  // namespace minnow
