// One fuzz target is one file, tests/fuzz/NAME_fuzz.cpp, whose body is written once:
//
//   #include "fuzz_target.hpp"
//   MINNOW_FUZZ_TARGET(name) {   // data, size: the input
//     ...                        // minnow::Error is a clean rejection; fuzz_check() flags bugs
//   }
//
// With -DMINNOW_LIBFUZZER (cmake -DMINNOW_FUZZ=ON, scripts/fuzz) the file becomes a
// libFuzzer binary; in the normal build it joins minnow_tests, which replays every file of
// tests/fuzz/corpus/NAME/ through the same function (tests/unit/fuzz_corpus_test.cpp).
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>

namespace minnow::fuzz {

using TargetFn = void (*)(const uint8_t* data, size_t size);

inline std::map<std::string, TargetFn>& targets() {
  static std::map<std::string, TargetFn> table;
  return table;
}

inline bool register_target(const char* name, TargetFn fn) {
  targets()[name] = fn;
  return true;
}

// A broken invariant: escapes as an exception that is not minnow::Error, which libFuzzer
// reports as a crash and the replay test as a failure.
inline void fuzz_check(bool ok, const char* what) {
  if (!ok) throw std::logic_error(std::string("fuzz check failed: ") + what);
}

}  // namespace minnow::fuzz

#ifdef MINNOW_LIBFUZZER
#define MINNOW_FUZZ_HOOK(name)                                                  \
  extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {     \
    minnow_fuzz_##name(data, size);                                             \
    return 0;                                                                   \
  }
#else
#define MINNOW_FUZZ_HOOK(name) \
  [[maybe_unused]] static const bool minnow_fuzz_registered_##name = minnow::fuzz::register_target(#name, minnow_fuzz_##name);
#endif

#define MINNOW_FUZZ_TARGET(name)                                       \
  static void minnow_fuzz_##name(const uint8_t* data, size_t size);    \
  MINNOW_FUZZ_HOOK(name)                                               \
  static void minnow_fuzz_##name(const uint8_t* data, size_t size)
