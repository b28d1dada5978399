// Parity of tokenizer_from_hf_json with the `tokenizers` package: golden ids made by
// tests/reference/make_tokenizer_golden.py must be reproduced exactly, for every string.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "base/error.hpp"
#include "tokenizer/tokenizer.hpp"

namespace {

const std::string kRoot = MINNOW_SOURCE_DIR;
const std::string kData = kRoot + "/../shared/data/tokenizers/";

std::string tokenizer_path(const std::string& name) { return kData + name + "/tokenizer.json"; }

// The golden rows for a tokenizer (the test asserts the file exists).
nlohmann::json golden_rows(const std::string& name) {
  std::ifstream in(kRoot + "/tests/reference/golden/tokenizers/" + name + ".json");
  EXPECT_TRUE(in) << "missing golden file for " << name;
  return in ? nlohmann::json::parse(in) : nlohmann::json::array();
}

void check_parity(const std::string& name) {
  if (!std::filesystem::exists(tokenizer_path(name))) GTEST_SKIP() << "no tokenizer data at " << tokenizer_path(name);
  const auto golden = golden_rows(name);
  auto tok = minnow::tokenizer_from_hf_json(tokenizer_path(name));

  size_t matched = 0, round_trips = 0, round_trip_ok = 0;
  std::map<std::string, size_t> failed_by_category;
  for (const auto& row : golden) {
    const auto text = row.at("text").get<std::string>();
    const auto want = row.at("ids").get<std::vector<int32_t>>();
    const auto got = tok->encode(text, /*parse_special=*/true);
    if (got == want) {
      ++matched;
    } else {
      ++failed_by_category[row.at("category").get<std::string>()];
      ADD_FAILURE() << name << ": ids differ for " << nlohmann::json(text).dump();
    }
    if (row.at("roundtrip").get<bool>()) {
      ++round_trips;
      if (tok->decode(got, /*render_special=*/true) == text) ++round_trip_ok;
      else ADD_FAILURE() << name << ": decode(encode(x)) != x for " << nlohmann::json(text).dump();
    }
  }
  std::printf("[ parity   ] %s: %zu/%zu strings match, %zu/%zu round-trip\n", name.c_str(), matched, golden.size(),
              round_trip_ok, round_trips);
  for (const auto& [cat, n] : failed_by_category) std::printf("[ parity   ]   %s: %zu mismatches\n", cat.c_str(), n);
  EXPECT_EQ(matched, golden.size());
  EXPECT_GE(golden.size(), 2000u);
}

// One tokenizer serves every request thread of the server: encoding concurrently
// must give each thread the ids it gets alone (regex match state is per call).
void check_concurrent(const std::string& name) {
  if (!std::filesystem::exists(tokenizer_path(name))) GTEST_SKIP() << "no tokenizer data at " << tokenizer_path(name);
  const auto golden = golden_rows(name);
  ASSERT_FALSE(golden.empty());
  auto tok = minnow::tokenizer_from_hf_json(tokenizer_path(name));
  constexpr int kThreads = 4;
  std::vector<size_t> wrong(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int round = 0; round < 3; ++round)
        for (size_t i = static_cast<size_t>(t); i < golden.size() + static_cast<size_t>(t); ++i) {
          const auto& row = golden[i % golden.size()];
          if (tok->encode(row.at("text").get<std::string>(), true) != row.at("ids").get<std::vector<int32_t>>())
            ++wrong[static_cast<size_t>(t)];
        }
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(wrong[static_cast<size_t>(t)], 0u) << "thread " << t;
}

}  // namespace

TEST(TokenizerHfParity, ConcurrentEncodeQwen3) { check_concurrent("qwen3"); }

TEST(TokenizerHfParity, Qwen3) { check_parity("qwen3"); }
TEST(TokenizerHfParity, Llama3) { check_parity("llama3"); }
