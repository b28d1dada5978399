#include "chat/jinja/error.hpp"

#include <algorithm>

#include "base/error.hpp"
#include "chat/jinja/utf8.hpp"

namespace minnow::chat::jinja {

void throw_at(std::string_view source, std::size_t pos, const std::string& what) {
  pos = std::min(pos, source.size());
  const std::string_view before = source.substr(0, pos);
  const std::size_t line = 1 + static_cast<std::size_t>(std::count(before.begin(), before.end(), '\n'));
  const std::size_t line_start = before.rfind('\n') == std::string_view::npos ? 0 : before.rfind('\n') + 1;
  const std::size_t column = 1 + count_code_points(before.substr(line_start));
  throw minnow::Error("template: line " + std::to_string(line) + ", column " + std::to_string(column) +
                      ": " + what);
}

}  // namespace minnow::chat::jinja
