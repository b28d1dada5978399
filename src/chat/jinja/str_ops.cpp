#include "chat/jinja/str_ops.hpp"

#include <algorithm>

#include "chat/jinja/error.hpp"
#include "chat/jinja/operators.hpp"
#include "chat/jinja/utf8.hpp"

namespace minnow::chat::jinja {
namespace {

// Whitespace-separated words with their byte ranges.
std::vector<std::pair<std::size_t, std::size_t>> words(std::string_view s) {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  std::size_t i = 0, word_start = std::string_view::npos;
  while (i < s.size()) {
    const std::size_t start = i;
    const bool space = is_py_space(next_code_point(s, i));
    if (space && word_start != std::string_view::npos) {
      out.emplace_back(word_start, start);
      word_start = std::string_view::npos;
    } else if (!space && word_start == std::string_view::npos) {
      word_start = start;
    }
  }
  if (word_start != std::string_view::npos) out.emplace_back(word_start, s.size());
  return out;
}

void check_sep(const std::string_view* sep) {
  if (sep != nullptr && sep->empty()) throw EvalError("empty separator");
}

bool is_cased(char32_t cp) { return is_lower_cp(cp) || is_upper_cp(cp) || cp == 0xDF; }

}  // namespace

std::vector<std::string> py_split(std::string_view s, const std::string_view* sep, std::int64_t maxsplit) {
  check_sep(sep);
  std::vector<std::string> out;
  if (sep == nullptr) {
    const auto ws = words(s);
    for (std::size_t k = 0; k < ws.size(); ++k) {
      if (maxsplit >= 0 && static_cast<std::int64_t>(k) == maxsplit) {
        // The rest of the string, leading whitespace removed, is the last part.
        out.emplace_back(py_strip(s.substr(ws[k].first), nullptr, true, false));
        break;
      }
      out.emplace_back(s.substr(ws[k].first, ws[k].second - ws[k].first));
    }
    return out;
  }
  std::size_t start = 0;
  for (std::int64_t n = 0; maxsplit < 0 || n < maxsplit; ++n) {
    const std::size_t hit = s.find(*sep, start);
    if (hit == std::string_view::npos) break;
    out.emplace_back(s.substr(start, hit - start));
    start = hit + sep->size();
  }
  out.emplace_back(s.substr(start));
  return out;
}

std::vector<std::string> py_rsplit(std::string_view s, const std::string_view* sep, std::int64_t maxsplit) {
  check_sep(sep);
  if (maxsplit < 0) return py_split(s, sep, -1);  // same result when every split is made
  std::vector<std::string> out;
  if (sep == nullptr) {
    const auto ws = words(s);
    std::size_t k = ws.size();
    for (std::int64_t n = 0; k > 0 && n < maxsplit; ++n, --k) {
      out.emplace_back(s.substr(ws[k - 1].first, ws[k - 1].second - ws[k - 1].first));
    }
    if (k > 0) out.emplace_back(py_strip(s.substr(0, ws[k - 1].second), nullptr, false, true));
  } else {
    std::size_t end = s.size();
    for (std::int64_t n = 0; n < maxsplit; ++n) {
      if (end < sep->size()) break;
      const std::size_t hit = s.rfind(*sep, end - sep->size());
      if (hit == std::string_view::npos) break;
      out.emplace_back(s.substr(hit + sep->size(), end - hit - sep->size()));
      end = hit;
    }
    out.emplace_back(s.substr(0, end));
  }
  std::reverse(out.begin(), out.end());
  return out;
}

std::string py_replace(std::string_view s, std::string_view old, std::string_view with, std::int64_t count) {
  std::string out;
  if (old.empty()) {
    // Python inserts the replacement before every character and at the end.
    std::size_t i = 0;
    std::int64_t n = 0;
    while (count < 0 || n < count) {
      out += with;
      ++n;
      if (i >= s.size()) break;
      const std::size_t start = i;
      next_code_point(s, i);
      out.append(s.substr(start, i - start));
      if (out.size() > kMaxResultSize) throw EvalError("result too large");
    }
    out.append(s.substr(std::min(i, s.size())));
    return out;
  }
  std::size_t start = 0;
  for (std::int64_t n = 0; count < 0 || n < count; ++n) {
    const std::size_t hit = s.find(old, start);
    if (hit == std::string_view::npos) break;
    out.append(s.substr(start, hit - start));
    out += with;
    if (out.size() > kMaxResultSize) throw EvalError("result too large");
    start = hit + old.size();
  }
  out.append(s.substr(start));
  return out;
}

std::string py_capitalize(std::string_view s) {
  if (s.empty()) return "";
  std::size_t i = 0;
  next_code_point(s, i);
  return to_upper(s.substr(0, i)) + to_lower(s.substr(i));
}

std::string py_title(std::string_view s) {
  std::string out;
  bool prev_cased = false;
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t start = i;
    const char32_t cp = next_code_point(s, i);
    const std::string_view ch = s.substr(start, i - start);
    out += prev_cased ? to_lower(ch) : to_upper(ch);
    prev_cased = is_cased(cp);
  }
  return out;
}

bool py_islower(std::string_view s) {
  bool any = false;
  for (std::size_t i = 0; i < s.size();) {
    const char32_t cp = next_code_point(s, i);
    if (is_upper_cp(cp)) return false;
    any = any || is_lower_cp(cp);
  }
  return any;
}

bool py_isupper(std::string_view s) {
  bool any = false;
  for (std::size_t i = 0; i < s.size();) {
    const char32_t cp = next_code_point(s, i);
    if (is_lower_cp(cp)) return false;
    any = any || is_upper_cp(cp);
  }
  return any;
}

}  // namespace minnow::chat::jinja
