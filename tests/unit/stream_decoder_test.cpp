#include <gtest/gtest.h>

#include "tokenizer/stream_decoder.hpp"

using minnow::StreamDecoder;

TEST(StreamDecoder, HoldsPartialCharacters) {
  StreamDecoder d;
  const std::string euro = "\xE2\x82\xAC";
  EXPECT_EQ(d.push("a"), "a");
  EXPECT_EQ(d.push(euro.substr(0, 1)), "");
  EXPECT_EQ(d.push(euro.substr(1, 1)), "");
  EXPECT_EQ(d.push(euro.substr(2, 1) + "b"), euro + "b");
  EXPECT_EQ(d.flush(), "");
}

TEST(StreamDecoder, InvalidBytesBecomeReplacement) {
  StreamDecoder d;
  EXPECT_EQ(d.push("\x80x"), "\xEF\xBF\xBDx");
  EXPECT_EQ(d.push("\xE0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD");  // overlong lead can never complete
  EXPECT_EQ(d.push("\xF0\x9F"), "");
  EXPECT_EQ(d.flush(), "\xEF\xBF\xBD");
}

TEST(StreamDecoder, EveryPrefixIsValidUtf8) {
  const std::string text = "h\xC3\xA9llo \xE4\xB8\x96\xE7\x95\x8C \xF0\x9F\x98\x80!";
  StreamDecoder d;
  std::string out;
  for (char c : text) out += d.push(std::string(1, c));
  out += d.flush();
  EXPECT_EQ(out, text);
}
