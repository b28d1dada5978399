// The exception the C++ API throws: untrusted input (files, arguments, templates) and
// runtime failures, with a one-line message naming the problem. The C API never lets it
// cross; its type info is exported from libminnow.so, so callers can catch it by type.
#pragma once
#include <stdexcept>
#include <string>

namespace minnow {

class __attribute__((visibility("default"))) Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace minnow
