// UTF-8 helpers. Jinja templates run on Python str, so lengths, indices and
// whitespace are counted in code points, not bytes.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace minnow::chat::jinja {

// Decodes the code point starting at s[i] and advances i. Malformed bytes decode
// as themselves (one byte each) so that no input can make us read out of bounds.
char32_t next_code_point(std::string_view s, std::size_t& i);
void append_utf8(std::string& out, char32_t cp);

std::size_t count_code_points(std::string_view s);
// Byte offsets of every code point start, plus s.size() at the end.
std::vector<std::size_t> code_point_offsets(std::string_view s);

// Python's str.isspace(): ASCII whitespace, \x1c-\x1f and the Unicode spaces.
bool is_py_space(char32_t cp);
// Strips code points for which is_py_space holds (chars == nullptr) or that
// occur in *chars, like Python's str.strip/lstrip/rstrip.
std::string_view py_strip(std::string_view s, const std::string_view* chars, bool left, bool right);

// Case mapping for ASCII, Latin-1, Latin Extended-A, Greek and Cyrillic: what chat
// content realistically contains. Other scripts pass through unchanged.
std::string to_upper(std::string_view s);
std::string to_lower(std::string_view s);
bool is_lower_cp(char32_t cp);
bool is_upper_cp(char32_t cp);

}  // namespace minnow::chat::jinja
