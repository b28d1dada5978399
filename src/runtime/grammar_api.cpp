// The public face of grammar/json_schema.hpp.
#include <nlohmann/json.hpp>

#include "base/error.hpp"
#include "grammar/json_schema.hpp"
#include "minnow/llm.hpp"

namespace minnow {

std::string json_schema_to_grammar(std::string_view schema_json) {
  nlohmann::ordered_json schema;  // keeps the properties in the schema's order
  try {
    schema = nlohmann::ordered_json::parse(schema_json);
  } catch (const nlohmann::json::exception& e) {
    throw Error(std::string("json schema: not valid JSON (") + e.what() + ")");
  }
  return json_schema_to_gbnf(schema);
}

std::string json_object_grammar() { return json_object_gbnf(); }

}  // namespace minnow
