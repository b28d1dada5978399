"""JSON Schemas for structured output, one (name, schema) pair each: the subset that
src/grammar/json_schema.cpp turns into GBNF (tests/e2e/test_structured_output.py asks the
server for each and validates the answers with the `jsonschema` package). Data only.
"""

CASES = [
    ("flat_object", {
        "type": "object",
        "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
        "required": ["name", "age"],
        "additionalProperties": False,
    }),
    ("nested_object", {
        "type": "object",
        "properties": {
            "city": {"type": "string", "maxLength": 40},
            "location": {
                "type": "object",
                "properties": {"lat": {"type": "number"}, "lon": {"type": "number"}},
                "required": ["lat", "lon"],
            },
        },
        "required": ["city", "location"],
    }),
    ("array_of_objects", {
        "type": "object",
        "properties": {
            "people": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"first": {"type": "string"}, "last": {"type": "string"}},
                    "required": ["first", "last"],
                },
                "minItems": 1,
                "maxItems": 3,
            },
        },
        "required": ["people"],
    }),
    ("string_enum", {"type": "string", "enum": ["red", "green", "blue"]}),
    ("number_enum", {"enum": [1, 2, 3.5, -7]}),
    ("mixed_enum", {"enum": ["yes", 0, True, None, {"k": [1, "two"]}]}),
    ("const_field", {
        "type": "object",
        "properties": {"kind": {"const": "circle"}, "radius": {"type": "number", "minimum": 0}},
        "required": ["kind", "radius"],
    }),
    ("number", {"type": "number"}),
    ("integer", {"type": "integer"}),
    ("non_negative_integer", {"type": "integer", "minimum": 0}),
    ("boolean", {"type": "boolean"}),
    ("null", {"type": "null"}),
    ("escaped_strings", {
        "type": "object",
        "properties": {
            'say "hi"': {"enum": ['quote " and backslash \\', "tab\tnew\nline", "slash /", "caf\u00e9 \u2603"]},
            "back\\slash": {"type": "string", "maxLength": 10},
        },
        "required": ['say "hi"'],
    }),
    ("optional_fields", {
        "type": "object",
        "properties": {
            "id": {"type": "integer"},
            "nickname": {"type": "string"},
            "email": {"type": "string", "format": "email"},
            "active": {"type": "boolean"},
        },
        "required": ["id", "active"],
    }),
    ("all_optional", {
        "type": "object",
        "properties": {"a": {"type": "string"}, "b": {"type": "integer"}, "c": {"type": "boolean"}},
    }),
    ("any_of", {
        "anyOf": [
            {"type": "string", "maxLength": 20},
            {"type": "object", "properties": {"code": {"type": "integer"}}, "required": ["code"]},
        ],
    }),
    ("one_of_shapes", {
        "oneOf": [
            {"type": "object", "properties": {"shape": {"const": "square"}, "side": {"type": "number"}},
             "required": ["shape", "side"]},
            {"type": "object", "properties": {"shape": {"const": "circle"}, "r": {"type": "number"}},
             "required": ["shape", "r"]},
        ],
    }),
    ("nullable_type_array", {
        "type": "object",
        "properties": {"middle_name": {"type": ["string", "null"]}, "score": {"type": ["integer", "null"]}},
        "required": ["middle_name", "score"],
    }),
    ("defs_ref", {
        "$defs": {
            "address": {
                "type": "object",
                "properties": {"street": {"type": "string"}, "zip": {"type": "string", "minLength": 5, "maxLength": 5}},
                "required": ["street", "zip"],
            },
        },
        "type": "object",
        "properties": {"home": {"$ref": "#/$defs/address"}, "work": {"$ref": "#/$defs/address"}},
        "required": ["home"],
    }),
    ("definitions_ref", {
        "definitions": {"color": {"type": "string", "enum": ["cyan", "magenta", "yellow"]}},
        "type": "array",
        "items": {"$ref": "#/definitions/color"},
        "maxItems": 4,
    }),
    ("recursive_tree", {
        "$defs": {
            "node": {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "maxLength": 12},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/node"}, "maxItems": 2},
                },
                "required": ["name"],
            },
        },
        "$ref": "#/$defs/node",
    }),
    ("recursive_root", {
        "type": "object",
        "properties": {"value": {"type": "integer"}, "next": {"anyOf": [{"$ref": "#"}, {"type": "null"}]}},
        "required": ["value", "next"],
    }),
    ("min_max_items", {"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 4}),
    ("exact_items", {"type": "array", "items": {"type": "boolean"}, "minItems": 3, "maxItems": 3}),
    ("min_max_length", {
        "type": "object",
        "properties": {"code": {"type": "string", "minLength": 3, "maxLength": 3},
                       "note": {"type": "string", "minLength": 1, "maxLength": 30}},
        "required": ["code", "note"],
    }),
    ("additional_properties_schema", {
        "type": "object",
        "properties": {"title": {"type": "string"}},
        "required": ["title"],
        "additionalProperties": {"type": "integer"},
    }),
    ("string_map", {"type": "object", "additionalProperties": {"type": "string", "maxLength": 16}}),
    ("empty_schema", {}),
    ("any_object", {"type": "object"}),
    ("allof_single", {"allOf": [{"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}]}),
    ("annotated", {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Event",
        "description": "A calendar event",
        "type": "object",
        "properties": {
            "title": {"type": "string", "description": "what", "examples": ["Lunch"]},
            "day": {"type": "string", "format": "date", "default": "2024-01-01"},
            "attendees": {"type": "array", "items": {"type": "string"}, "maxItems": 5},
        },
        "required": ["title", "day", "attendees"],
        "additionalProperties": False,
    }),
    ("array_of_arrays", {
        "type": "array",
        "items": {"type": "array", "items": {"type": "number"}, "minItems": 2, "maxItems": 2},
        "maxItems": 3,
    }),
    ("union_of_all_types", {"type": ["string", "number", "boolean", "null"]}),
]
