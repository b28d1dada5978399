// Unicode Normalization Form C, for tokenizer.json normalizers (Qwen uses NFC).
#pragma once
#include <string>
#include <string_view>

namespace minnow {

// NFC of the valid UTF-8 runs of s; invalid bytes are copied through and act as boundaries.
std::string nfc_normalize(std::string_view s);

}  // namespace minnow
