// The byte <-> printable-character mapping of byte-level BPE (GPT-2): bytes that are
// printable stand for themselves, the other 68 are shifted to U+0100 and up, so every
// token is a printable string.
#pragma once
#include <array>
#include <cstdint>
#include <string>

namespace minnow {

// UTF-8 text of the character that stands for byte b.
const std::array<std::string, 256>& byte_level_chars();
// Byte for a code point, or -1 if the code point does not stand for a byte.
int byte_level_byte(uint32_t codepoint);

}  // namespace minnow
