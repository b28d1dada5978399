// Error type for untrusted input and runtime failures. Thrown inside the library,
// caught at the front ends (CLI, and later the C API, which never lets it cross).
#pragma once
#include <stdexcept>
#include <string>

namespace minnow {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace minnow
