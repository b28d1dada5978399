#include "chat/jinja/json_value.hpp"

#include <nlohmann/json.hpp>

#include "base/error.hpp"
#include "chat/jinja/error.hpp"

namespace minnow::chat::jinja {
namespace {

Value convert(const nlohmann::ordered_json& j, int depth) {
  if (depth > kMaxDepth) throw minnow::Error("template input nested too deeply");
  switch (j.type()) {
    case nlohmann::ordered_json::value_t::null: return Value(None{});
    case nlohmann::ordered_json::value_t::boolean: return Value(j.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer: return Value(j.get<std::int64_t>());
    case nlohmann::ordered_json::value_t::number_unsigned: {
      const auto u = j.get<std::uint64_t>();
      if (u > static_cast<std::uint64_t>(INT64_MAX)) return Value(static_cast<double>(u));
      return Value(static_cast<std::int64_t>(u));
    }
    case nlohmann::ordered_json::value_t::number_float: return Value(j.get<double>());
    case nlohmann::ordered_json::value_t::string: return Value(j.get<std::string>());
    case nlohmann::ordered_json::value_t::array: {
      std::vector<Value> items;
      for (const auto& item : j) items.push_back(convert(item, depth + 1));
      return Value::list(std::move(items));
    }
    case nlohmann::ordered_json::value_t::object: {
      std::vector<std::pair<std::string, Value>> items;
      for (auto it = j.begin(); it != j.end(); ++it) items.emplace_back(it.key(), convert(it.value(), depth + 1));
      return Value::dict(std::move(items));
    }
    default: throw minnow::Error("template input: unsupported JSON value");
  }
}

}  // namespace

Value value_from_json(const nlohmann::ordered_json& j) {
  try {
    return convert(j, 0);
  } catch (const EvalError& e) {
    throw minnow::Error(std::string("template input: ") + e.what());
  }
}

}  // namespace minnow::chat::jinja
