#include "chat/jinja/template.hpp"

#include "chat/jinja/evaluator.hpp"
#include "chat/jinja/lexer.hpp"
#include "chat/jinja/parser.hpp"

namespace minnow::chat::jinja {

Template::Template(std::string_view source) : source_(normalize_source(source)) {
  body_ = parse_template(source_, tokenize(source_));
}

std::string Template::render(const Value& context, const RenderLimits& limits) const {
  Evaluator evaluator(source_, context, limits.max_output, limits.max_steps);
  return evaluator.render(body_);
}

}  // namespace minnow::chat::jinja
