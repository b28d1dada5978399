#include "tokenizer/stream_decoder.hpp"

#include "tokenizer/utf8.hpp"

namespace minnow {
namespace {
constexpr std::string_view kReplacement = "\xEF\xBF\xBD";

// True if s[i..] is a prefix of some valid sequence that more bytes could complete.
bool could_complete(std::string_view s, size_t i) {
  size_t n = utf8_sequence_length(static_cast<uint8_t>(s[i]));
  if (n == 0 || i + n <= s.size()) return false;
  std::string probe(s.substr(i));
  probe.append(n - probe.size(), '\x80');  // fill with the smallest continuation byte...
  if (utf8_valid_length(probe, 0) == n) return true;
  probe.back() = '\xbf';                   // ...or the largest, for lead bytes with upper limits
  for (size_t k = s.size() - i; k < n; ++k) probe[k] = '\xbf';
  return utf8_valid_length(probe, 0) == n;
}
}  // namespace

std::string_view StreamDecoder::push(std::string_view bytes) {
  pending_.append(bytes);
  std::string& out = out_;
  out.clear();
  size_t i = 0;
  while (i < pending_.size()) {
    size_t n = utf8_valid_length(pending_, i);
    if (n > 0) {
      out.append(pending_, i, n);
      i += n;
    } else if (could_complete(pending_, i)) {
      break;  // wait for the rest of this character
    } else {
      out += kReplacement;
      ++i;
    }
  }
  pending_.erase(0, i);
  return out;
}

std::string StreamDecoder::flush() {
  std::string out;
  if (!pending_.empty()) out = kReplacement;
  pending_.clear();
  return out;
}

}  // namespace minnow
