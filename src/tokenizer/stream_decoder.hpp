// Turns the bytes of generated tokens into text pieces that are always whole UTF-8
// characters: a token may end mid-character, so its tail waits for the next token.
#pragma once
#include <string>
#include <string_view>

namespace minnow {

class StreamDecoder {
 public:
  StreamDecoder() {
    pending_.reserve(64);
    out_.reserve(256);  // longer than any token's bytes, so decoding never grows it
  }
  // Adds bytes; returns the text that is now complete (valid until the next call; the
  // buffers are reused, so a steady stream allocates nothing). Bytes that can never form
  // a valid character come out as U+FFFD.
  std::string_view push(std::string_view bytes);
  // End of stream: whatever is pending (an incomplete character) comes out as U+FFFD.
  std::string flush();
  void reset() { pending_.clear(); }

 private:
  std::string pending_, out_;
};

}  // namespace minnow
