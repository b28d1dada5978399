// Converts JSON (e.g. tool schemas or structured messages) into template values.
#pragma once
#include <nlohmann/json_fwd.hpp>

#include "chat/jinja/value.hpp"

namespace minnow::chat::jinja {

// Objects keep their key order as nlohmann::json iterates them. Throws
// minnow::Error for JSON nested deeper than values may be.
Value value_from_json(const nlohmann::json& j);

}  // namespace minnow::chat::jinja
