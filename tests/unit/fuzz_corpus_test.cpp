// Replays every saved fuzz input (tests/fuzz/corpus/NAME/*) through the same function the
// libFuzzer target NAME runs, so past findings stay fixed in every build, ASan included.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "fuzz_target.hpp"

namespace {

namespace fs = std::filesystem;
const fs::path kCorpus = fs::path(MINNOW_SOURCE_DIR) / "tests" / "fuzz" / "corpus";

TEST(FuzzCorpus, EveryCorpusHasATarget) {
  ASSERT_TRUE(fs::is_directory(kCorpus)) << kCorpus;
  for (const auto& dir : fs::directory_iterator(kCorpus)) {
    const std::string name = dir.path().filename().string();
    EXPECT_TRUE(minnow::fuzz::targets().count(name)) << "no tests/fuzz/" << name << "_fuzz.cpp for " << dir.path();
  }
}

TEST(FuzzCorpus, ReplaysWithoutFindings) {
  int replayed = 0;
  for (const auto& [name, fn] : minnow::fuzz::targets()) {
    const fs::path dir = kCorpus / name;
    EXPECT_TRUE(fs::is_directory(dir)) << "target '" << name << "' has no corpus " << dir;
    if (!fs::is_directory(dir)) continue;
    for (const auto& entry : fs::directory_iterator(dir)) {
      if (!entry.is_regular_file()) continue;
      std::ifstream in(entry.path(), std::ios::binary);
      const std::vector<char> bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
      SCOPED_TRACE(entry.path().string());
      EXPECT_NO_THROW(fn(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
      ++replayed;
    }
  }
  EXPECT_GT(replayed, 0);
  std::printf("[   INFO   ] replayed %d fuzz inputs from %zu targets\n", replayed, minnow::fuzz::targets().size());
}

}  // namespace
