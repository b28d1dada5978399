// Compile-time check for unknown filters and tests, with jinja2's leniency:
// inside {% if %} blocks and inline "a if b else c" expressions an unknown name
// is only an error if it is reached at render time (loop and macro bodies are
// checked strictly again). Templates can thus guard optional features.
#pragma once
#include <string_view>

#include "chat/jinja/ast.hpp"

namespace minnow::chat::jinja {

// Throws minnow::Error naming line and column of the first strict offender.
void check_names(std::string_view source, const Body& body);

}  // namespace minnow::chat::jinja
