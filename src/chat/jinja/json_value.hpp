// Converts JSON (e.g. tool schemas or structured messages) into template values.
#pragma once
#include <nlohmann/json_fwd.hpp>

#include "chat/jinja/value.hpp"

namespace minnow::chat::jinja {

// Objects keep their key order (ordered_json), as Python dicts do; tojson shows it. Throws
// minnow::Error for JSON nested deeper than values may be.
Value value_from_json(const nlohmann::ordered_json& j);

}  // namespace minnow::chat::jinja
