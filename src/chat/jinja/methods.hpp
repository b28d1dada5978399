// Methods callable on values from templates: the Python str and dict methods
// chat templates use (message.content.strip(), tool.items(), ...).
#pragma once
#include <optional>
#include <string>

#include "chat/jinja/value.hpp"

namespace minnow::chat::jinja {

// A callable bound to obj, or nullopt when obj's type has no such method.
std::optional<Value> find_method(const Value& obj, const std::string& name);

}  // namespace minnow::chat::jinja
