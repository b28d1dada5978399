// minnow::Model: the public face of a LoadedModel.
#include <nlohmann/json.hpp>

#include "base/error.hpp"
#include "chat/chat_template.hpp"
#include "minnow/llm.hpp"
#include "models/model.hpp"

namespace minnow {

Model::Model(std::unique_ptr<LoadedModel> m) : m_(std::move(m)) {
  const ModelConfig& c = m_->config;
  info_ = {c.arch, c.name, c.n_layers, c.d_model, c.n_heads, c.n_kv_heads, c.d_ff, c.vocab_size, c.ctx_train, 0, 0};
  for (const auto& t : m_->tensors) {
    info_.n_params += t.n_elements;
    info_.weight_bytes += t.n_bytes;
  }
}

Model::~Model() = default;

std::unique_ptr<Model> Model::load(const std::string& path) {
  return std::unique_ptr<Model>(new Model(load_model(path)));
}

std::vector<int32_t> Model::tokenize(std::string_view text, bool parse_special) const {
  std::vector<int32_t> ids = m_->tokenizer->encode(text, parse_special);
  // A rendered chat template usually starts with the BOS text itself; one BOS is enough.
  const Tokenizer& tok = *m_->tokenizer;
  if (tok.add_bos() && ids.size() >= 2 && ids[0] == tok.bos_id() && ids[1] == tok.bos_id()) ids.erase(ids.begin());
  return ids;
}

std::string Model::detokenize(std::span<const int32_t> ids, bool render_special) const {
  std::string out;
  for (int32_t id : ids) out += m_->tokenizer->token_bytes(id, render_special);
  return out;
}

std::string Model::token_text(int32_t id) const {
  if (id < 0 || id >= m_->tokenizer->vocab_size()) return {};
  return std::string(m_->tokenizer->token_text(id));
}

bool Model::is_end_of_generation(int32_t id) const { return m_->tokenizer->is_end_of_generation(id); }

int32_t Model::bos_id() const { return m_->tokenizer->bos_id(); }
int32_t Model::eos_id() const { return m_->tokenizer->eos_id(); }

bool Model::has_chat_template() const { return !m_->chat_template.empty(); }
void Model::set_chat_template(std::string jinja) { m_->chat_template = std::move(jinja); }

std::string Model::apply_chat_template(const std::vector<ChatMessage>& messages, bool add_generation_prompt) const {
  if (m_->chat_template.empty()) throw Error("chat: the model file has no chat template (tokenizer.chat_template)");
  chat::TemplateInputs in;
  for (const auto& msg : messages) in.messages.push_back({msg.role, msg.content});
  in.add_generation_prompt = add_generation_prompt;
  const Tokenizer& tok = *m_->tokenizer;
  if (tok.bos_id() >= 0) in.bos_token = tok.token_text(tok.bos_id());
  if (tok.eos_id() >= 0) in.eos_token = tok.token_text(tok.eos_id());
  return chat::render_chat_template(m_->chat_template, in);
}

std::string Model::apply_chat_template_json(std::string_view variables_json) const {
  if (m_->chat_template.empty()) throw Error("chat: the model file has no chat template (tokenizer.chat_template)");
  // ordered: objects keep their key order, as Python dicts do in tojson output.
  nlohmann::ordered_json vars = nlohmann::ordered_json::parse(variables_json, nullptr, false);
  if (vars.is_discarded()) throw Error("chat template: the variables are not valid JSON");
  if (!vars.is_object()) throw Error("chat template: the variables must be a JSON object");
  const Tokenizer& tok = *m_->tokenizer;
  if (!vars.contains("bos_token")) vars["bos_token"] = tok.bos_id() >= 0 ? tok.token_text(tok.bos_id()) : "";
  if (!vars.contains("eos_token")) vars["eos_token"] = tok.eos_id() >= 0 ? tok.token_text(tok.eos_id()) : "";
  return chat::render_chat_template(m_->chat_template, vars);
}

}  // namespace minnow
