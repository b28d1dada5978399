// Unicode tables for NFC (generated into nfc_tables.cpp by tests/reference/gen_nfc_tables.py).
#pragma once
#include <cstddef>
#include <cstdint>

namespace minnow::nfc {

struct CccEntry {
  uint32_t cp;
  uint8_t ccc;
};
struct DecompEntry {
  uint32_t cp, first, second;  // second == 0: singleton decomposition
};
struct ComposeEntry {
  uint32_t first, second, composite;
};

extern const CccEntry kCcc[];  // sorted by cp; code points absent have class 0
extern const size_t kCccCount;
extern const DecompEntry kDecomp[];  // sorted by cp; canonical, one level
extern const size_t kDecompCount;
extern const ComposeEntry kCompose[];  // sorted by (first, second)
extern const size_t kComposeCount;

}  // namespace minnow::nfc
