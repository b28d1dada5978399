// Which type each tensor gets: the target (a type or a mixed recipe such as Q4_K_M), the
// recipe's table of tensors that get more bits, --pure, --override PATTERN=TYPE, and the
// fallback for a row length that is not a whole number of the type's blocks.
#pragma once
#include <cstdint>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "tensor/dtype.hpp"

namespace minnow::quant {

struct Target {
  std::string name;  // as the user spells it, upper case: "Q4_K_M", "Q8_0", "F16"
  DType base;        // the type of every matrix no rule picks otherwise
  bool mixed = false;  // a recipe with its own table (the _M types)
};
// nullopt for a name that is neither a type minnow writes nor a recipe.
std::optional<Target> parse_target(std::string_view name);
std::string target_names();  // "Q4_0, Q4_1, ..." for help and errors

// llama.cpp's general.file_type number for the target (the "mostly X" of the file).
uint32_t file_type_of(const Target& t);

// PATTERN=TYPE: PATTERN is a glob (* ? [...]) over the whole name, or /REGEX/ searched in it.
struct Override {
  std::string text;  // as given, for messages
  std::optional<std::regex> regex;
  std::string glob;
  DType type;
  bool matches(const std::string& name) const;
};
Override parse_override(const std::string& spec);  // throws Error on a bad spec

struct Choice {
  DType type;
  std::string reason;     // why it is not the target's base type ("Q4_K_M recipe", "--override ..."), or empty
  std::string fallback;   // when the wanted type did not fit the rows: "Q4_K does not fit rows of 576 ..."
};

struct TensorFacts {
  std::string name;           // GGUF name ("blk.3.attn_v.weight")
  std::vector<int64_t> dims;  // dims[0] = row length
  int n_layers = 0;
  bool tied_output = false;   // token_embd also serves as the output head
};

struct Plan {
  Target target;
  bool pure = false;
  std::vector<Override> overrides;
  Choice choose(const TensorFacts& t) const;
};

// The type to use when `wanted` does not divide a row of `row` values: the nearest type
// with 32-value blocks for a K type, F16 when not even 32 divides it.
DType fallback_type(DType wanted, int64_t row);

}  // namespace minnow::quant
