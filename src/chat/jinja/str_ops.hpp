// Python str operations shared by string methods and filters.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace minnow::chat::jinja {

// Concatenates by appending. ("lit" + std::string chains trip a GCC 12
// -Wrestrict false positive once inlined.)
template <typename... Parts>
std::string concat(const Parts&... parts) {
  std::string out;
  (out.append(std::string_view(parts)), ...);
  return out;
}

// str.split(sep, maxsplit); sep == nullptr splits on whitespace runs.
std::vector<std::string> py_split(std::string_view s, const std::string_view* sep, std::int64_t maxsplit);
// str.rsplit(sep, maxsplit).
std::vector<std::string> py_rsplit(std::string_view s, const std::string_view* sep, std::int64_t maxsplit);
// str.replace(old, new, count); count < 0 replaces all.
std::string py_replace(std::string_view s, std::string_view old, std::string_view with, std::int64_t count);
std::string py_capitalize(std::string_view s);
std::string py_title(std::string_view s);  // str.title(): capitalizes after every uncased character
bool py_islower(std::string_view s);
bool py_isupper(std::string_view s);

}  // namespace minnow::chat::jinja
