// JSON Schema (a draft 2020-12 subset, about what OpenAI's structured outputs take) to a
// GBNF grammar for grammar/gbnf.hpp: the grammar's texts are JSON texts the schema accepts.
// Supported: type (one or a list), properties, required, additionalProperties, items,
// minItems, maxItems, minLength, maxLength, enum, const, anyOf, oneOf (as anyOf), allOf with
// one subschema, $ref to #, #/$defs/NAME or #/definitions/NAME, and minimum 0 (or 1, or
// exclusiveMinimum 0, for integers). Annotations are ignored; any other keyword is refused
// with Error("json schema: unsupported keyword \"K\" at /json/pointer").
#pragma once
#include <nlohmann/json.hpp>
#include <string>

namespace minnow {

// Properties come out in the schema's order, which only ordered_json keeps; the plain json
// overload sees its keys sorted.
std::string json_schema_to_gbnf(const nlohmann::ordered_json& schema);
std::string json_schema_to_gbnf(const nlohmann::json& schema);

// Any JSON object (OpenAI's response_format {"type": "json_object"}).
std::string json_object_gbnf();

}  // namespace minnow
