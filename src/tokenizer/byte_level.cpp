#include "tokenizer/byte_level.hpp"

#include <vector>

#include "tokenizer/utf8.hpp"

namespace minnow {
namespace {

bool printable(int b) { return (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255); }

struct Tables {
  std::array<std::string, 256> chars;
  std::vector<int16_t> byte_of_cp = std::vector<int16_t>(512, -1);
  Tables() {
    int shifted = 0;
    for (int b = 0; b < 256; ++b) {
      uint32_t cp = printable(b) ? static_cast<uint32_t>(b) : 256u + static_cast<uint32_t>(shifted++);
      chars[static_cast<size_t>(b)] = utf8_encode(cp);
      byte_of_cp[cp] = static_cast<int16_t>(b);
    }
  }
};

const Tables& tables() {
  static const Tables t;
  return t;
}

}  // namespace

const std::array<std::string, 256>& byte_level_chars() { return tables().chars; }

int byte_level_byte(uint32_t cp) { return cp < 512 ? tables().byte_of_cp[cp] : -1; }

}  // namespace minnow
