// Cuts generated text at the first of a request's stop strings (OpenAI `stop`). Text that
// could still become the start of a stop string is held back until the next piece
// decides, so a client never sees part of a stop sequence.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace minnow {

class StopMatcher {
 public:
  explicit StopMatcher(std::vector<std::string> stops = {});

  // Adds a piece of generated text; returns what can be shown now. After a stop string
  // is found, returns only the text before it and stopped() turns true.
  std::string push(std::string_view piece);
  bool stopped() const { return stopped_; }
  // End of generation without a stop: the held-back text.
  std::string flush();

 private:
  std::vector<std::string> stops_;
  std::string held_;
  bool stopped_ = false;
};

}  // namespace minnow
