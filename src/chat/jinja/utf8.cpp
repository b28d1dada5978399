#include "chat/jinja/utf8.hpp"

namespace minnow::chat::jinja {

char32_t next_code_point(std::string_view s, std::size_t& i) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  int len = 1;
  char32_t cp = b0;
  if (b0 >= 0xF0 && b0 < 0xF8) { len = 4; cp = b0 & 0x07; }
  else if (b0 >= 0xE0) { len = 3; cp = b0 & 0x0F; }
  else if (b0 >= 0xC0) { len = 2; cp = b0 & 0x1F; }
  if (len == 1 || i + len > s.size() || b0 >= 0xF8) {
    ++i;
    return b0;
  }
  for (int k = 1; k < len; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xC0) != 0x80) {
      ++i;
      return b0;
    }
    cp = (cp << 6) | (b & 0x3F);
  }
  i += len;
  return cp;
}

void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | ((cp >> 18) & 0x07));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

std::size_t count_code_points(std::string_view s) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < s.size(); ++n) next_code_point(s, i);
  return n;
}

std::vector<std::size_t> code_point_offsets(std::string_view s) {
  std::vector<std::size_t> offs;
  std::size_t i = 0;
  while (i < s.size()) {
    offs.push_back(i);
    next_code_point(s, i);
  }
  offs.push_back(s.size());
  return offs;
}

bool is_py_space(char32_t cp) {
  return (cp >= 0x09 && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x20) || cp == 0x85 || cp == 0xA0 ||
         cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 ||
         cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

namespace {

bool strip_match(char32_t cp, const std::string_view* chars) {
  if (chars == nullptr) return is_py_space(cp);
  for (std::size_t i = 0; i < chars->size();) {
    if (next_code_point(*chars, i) == cp) return true;
  }
  return false;
}

// Case pairs that are a fixed offset apart over a range, stepping by 1 or 2.
struct CaseRange {
  char32_t lo, hi;  // upper-case range
  int delta;        // lower = upper + delta
  int step;
};

constexpr CaseRange kCaseRanges[] = {
    {0x41, 0x5A, 32, 1},     {0xC0, 0xD6, 32, 1},     {0xD8, 0xDE, 32, 1},
    {0x100, 0x12F, 1, 2},    {0x132, 0x137, 1, 2},    {0x139, 0x148, 1, 2},
    {0x14A, 0x177, 1, 2},    {0x179, 0x17E, 1, 2},    {0x391, 0x3A1, 32, 1},
    {0x3A3, 0x3AB, 32, 1},   {0x410, 0x42F, 32, 1},   {0x400, 0x40F, 80, 1},
    {0x460, 0x481, 1, 2},    {0x48A, 0x4BF, 1, 2},    {0x4D0, 0x52F, 1, 2},
};

char32_t lower_of(char32_t cp) {
  for (const auto& r : kCaseRanges) {
    if (cp >= r.lo && cp <= r.hi && (cp - r.lo) % r.step == 0) return cp + r.delta;
  }
  return cp;
}

char32_t upper_of(char32_t cp) {
  for (const auto& r : kCaseRanges) {
    const char32_t lo = r.lo + r.delta, hi = r.hi + r.delta;
    if (cp >= lo && cp <= hi && (cp - lo) % r.step == 0) return cp - r.delta;
  }
  if (cp == 0xFF) return 0x178;
  if (cp == 0xB5) return 0x39C;  // micro sign
  if (cp == 0x3C2) return 0x3A3;  // final sigma
  return cp;
}

}  // namespace

bool is_lower_cp(char32_t cp) { return upper_of(cp) != cp || cp == 0xDF; }
bool is_upper_cp(char32_t cp) { return lower_of(cp) != cp; }

std::string_view py_strip(std::string_view s, const std::string_view* chars, bool left, bool right) {
  const std::vector<std::size_t> offs = code_point_offsets(s);
  std::size_t first = 0, last = offs.size() - 1;  // code point index range [first, last)
  auto cp_at = [&](std::size_t k) {
    std::size_t i = offs[k];
    return next_code_point(s, i);
  };
  while (left && first < last && strip_match(cp_at(first), chars)) ++first;
  while (right && last > first && strip_match(cp_at(last - 1), chars)) --last;
  return s.substr(offs[first], offs[last] - offs[first]);
}

std::string to_upper(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t start = i;
    const char32_t cp = next_code_point(s, i);
    if (cp == 0xDF) {  // Python upper-cases sharp s to "SS"
      out += "SS";
    } else if (upper_of(cp) != cp) {
      append_utf8(out, upper_of(cp));
    } else {
      out.append(s.substr(start, i - start));  // keeps malformed bytes as they were
    }
  }
  return out;
}

std::string to_lower(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t start = i;
    const char32_t cp = next_code_point(s, i);
    if (lower_of(cp) != cp) {
      append_utf8(out, lower_of(cp));
    } else {
      out.append(s.substr(start, i - start));
    }
  }
  return out;
}

}  // namespace minnow::chat::jinja
