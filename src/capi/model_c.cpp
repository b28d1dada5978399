// C API: models, tokens and chat templates (over minnow::Model).
#include <string>
#include <vector>

#include "capi/capi.hpp"

using minnow::capi::check_handle;
using minnow::capi::copy_text;
using minnow::capi::fail;
using minnow::capi::guard;

namespace {

minnow_status check_model_params(const minnow_model_params& p) {
  if (p.n_threads < 0) return fail(MINNOW_ERR_INVALID_ARGUMENT, "minnow_model_load: n_threads must be >= 0 (got " + std::to_string(p.n_threads) + ")");
  if (p.n_ctx < 0) return fail(MINNOW_ERR_INVALID_ARGUMENT, "minnow_model_load: n_ctx must be >= 0 (got " + std::to_string(p.n_ctx) + ")");
  if (p.kv_type != MINNOW_KV_F16 && p.kv_type != MINNOW_KV_F32 && p.kv_type != MINNOW_KV_Q8_0)
    return fail(MINNOW_ERR_INVALID_ARGUMENT, "minnow_model_load: kv_type " + std::to_string(p.kv_type) +
                                                 " is not a minnow_kv_type");
  if (p.backend != MINNOW_BACKEND_CPU && p.backend != MINNOW_BACKEND_VULKAN)
    return fail(MINNOW_ERR_INVALID_ARGUMENT, "minnow_model_load: backend " + std::to_string(p.backend) +
                                                 " is not a minnow_backend");
  if (p.device < 0) return fail(MINNOW_ERR_INVALID_ARGUMENT, "minnow_model_load: device must be >= 0 (got " + std::to_string(p.device) + ")");
  if (p.gpu_layers < -1)
    return fail(MINNOW_ERR_INVALID_ARGUMENT, "minnow_model_load: gpu_layers must be >= -1 (got " + std::to_string(p.gpu_layers) + ")");
  return MINNOW_OK;
}

}  // namespace

extern "C" {

minnow_model_params minnow_model_params_default(void) {
  minnow_model_params p{};
  p.n_threads = 0;
  p.n_ctx = 0;
  p.kv_type = MINNOW_KV_F16;
  p.int8_activations = false;
  p.backend = MINNOW_BACKEND_CPU;
  p.device = 0;
  p.gpu_layers = -1;
  return p;
}

minnow_status minnow_model_load(const char* path, const minnow_model_params* params, minnow_model** out) {
  if (out == nullptr) return fail(MINNOW_ERR_INVALID_ARGUMENT, "minnow_model_load: out is NULL");
  *out = nullptr;
  if (path == nullptr) return fail(MINNOW_ERR_INVALID_ARGUMENT, "minnow_model_load: path is NULL");
  const minnow_model_params p = params ? *params : minnow_model_params_default();
  if (minnow_status s = check_model_params(p); s != MINNOW_OK) return s;
  return guard(MINNOW_ERR_LOAD, [&] {
    auto h = std::make_unique<minnow_model>();
    h->model = minnow::Model::load(path);
    h->defaults = p;
    return minnow::capi::publish(std::move(h), out);
  });
}

void minnow_model_free(minnow_model* model) { minnow::capi::destroy(model); }

minnow_status minnow_model_get_info(const minnow_model* model, minnow_model_info* out) {
  if (!check_handle(model, "minnow_model_get_info", "model")) return MINNOW_ERR_INVALID_ARGUMENT;
  if (out == nullptr) return fail(MINNOW_ERR_INVALID_ARGUMENT, "minnow_model_get_info: out is NULL");
  const minnow::ModelInfo& i = model->model->info();
  *out = {};
  out->architecture = i.architecture.c_str();
  out->name = i.name.c_str();
  out->n_layers = i.n_layers;
  out->d_model = i.d_model;
  out->n_heads = i.n_heads;
  out->n_kv_heads = i.n_kv_heads;
  out->d_ff = i.d_ff;
  out->vocab_size = i.vocab_size;
  out->context_length = i.context_length;
  out->n_params = i.n_params;
  out->weight_bytes = i.weight_bytes;
  out->bos_id = model->model->bos_id();
  out->eos_id = model->model->eos_id();
  out->has_chat_template = model->model->has_chat_template();
  return MINNOW_OK;
}

minnow_status minnow_tokenize(const minnow_model* model, const char* text, size_t text_len, bool parse_special,
                              int32_t* tokens, size_t capacity, size_t* n_out) {
  constexpr const char* kWhat = "minnow_tokenize";
  if (!check_handle(model, kWhat, "model")) return MINNOW_ERR_INVALID_ARGUMENT;
  if (text == nullptr && text_len > 0) return fail(MINNOW_ERR_INVALID_ARGUMENT, "minnow_tokenize: text is NULL");
  if (n_out == nullptr) return fail(MINNOW_ERR_INVALID_ARGUMENT, "minnow_tokenize: n_out is NULL");
  if (tokens == nullptr && capacity > 0)
    return fail(MINNOW_ERR_INVALID_ARGUMENT, "minnow_tokenize: tokens is NULL but capacity is not 0");
  return guard(MINNOW_ERR_INVALID_ARGUMENT, [&] {
    const std::vector<int32_t> ids = model->model->tokenize(std::string_view(text ? text : "", text_len), parse_special);
    *n_out = ids.size();
    if (ids.size() > capacity)
      return fail(MINNOW_ERR_BUFFER_TOO_SMALL, std::string(kWhat) + ": " + std::to_string(ids.size()) +
                                                   " tokens do not fit a buffer of " + std::to_string(capacity));
    std::copy(ids.begin(), ids.end(), tokens);
    return MINNOW_OK;
  });
}

minnow_status minnow_detokenize(const minnow_model* model, const int32_t* tokens, size_t n_tokens, bool render_special,
                                char* text, size_t capacity, size_t* n_out) {
  constexpr const char* kWhat = "minnow_detokenize";
  if (!check_handle(model, kWhat, "model")) return MINNOW_ERR_INVALID_ARGUMENT;
  if (tokens == nullptr && n_tokens > 0) return fail(MINNOW_ERR_INVALID_ARGUMENT, "minnow_detokenize: tokens is NULL");
  const int32_t vocab = model->model->info().vocab_size;
  for (size_t i = 0; i < n_tokens; ++i)
    if (tokens[i] < 0 || tokens[i] >= vocab)
      return fail(MINNOW_ERR_INVALID_ARGUMENT, "minnow_detokenize: token " + std::to_string(tokens[i]) + " (at " +
                                                   std::to_string(i) + ") is outside the vocabulary [0, " +
                                                   std::to_string(vocab) + ")");
  return guard(MINNOW_ERR_INVALID_ARGUMENT, [&] {
    const std::string s = model->model->detokenize({tokens, n_tokens}, render_special);
    return copy_text(s, text, capacity, n_out, kWhat);
  });
}

bool minnow_token_is_end_of_generation(const minnow_model* model, int32_t token) {
  if (model == nullptr || !minnow::capi::is_live(model)) return false;
  if (token < 0 || token >= model->model->info().vocab_size) return false;
  return model->model->is_end_of_generation(token);
}

minnow_status minnow_chat_apply(const minnow_model* model, const minnow_chat_message* messages, size_t n_messages,
                                bool add_generation_prompt, char* text, size_t capacity, size_t* n_out) {
  constexpr const char* kWhat = "minnow_chat_apply";
  if (!check_handle(model, kWhat, "model")) return MINNOW_ERR_INVALID_ARGUMENT;
  if (messages == nullptr && n_messages > 0) return fail(MINNOW_ERR_INVALID_ARGUMENT, "minnow_chat_apply: messages is NULL");
  if (!model->model->has_chat_template())
    return fail(MINNOW_ERR_NO_TEMPLATE, "minnow_chat_apply: the model file has no chat template");
  std::vector<minnow::ChatMessage> msgs;
  for (size_t i = 0; i < n_messages; ++i) {
    if (messages[i].role == nullptr || messages[i].content == nullptr)
      return fail(MINNOW_ERR_INVALID_ARGUMENT, "minnow_chat_apply: message " + std::to_string(i) + " has a NULL " +
                                                   (messages[i].role == nullptr ? "role" : "content"));
    msgs.push_back({messages[i].role, messages[i].content});
  }
  return guard(MINNOW_ERR_TEMPLATE, [&] {
    return copy_text(model->model->apply_chat_template(msgs, add_generation_prompt), text, capacity, n_out, kWhat);
  });
}

minnow_status minnow_chat_apply_json(const minnow_model* model, const char* variables_json, char* text,
                                     size_t capacity, size_t* n_out) {
  constexpr const char* kWhat = "minnow_chat_apply_json";
  if (!check_handle(model, kWhat, "model")) return MINNOW_ERR_INVALID_ARGUMENT;
  if (variables_json == nullptr) return fail(MINNOW_ERR_INVALID_ARGUMENT, "minnow_chat_apply_json: variables_json is NULL");
  if (!model->model->has_chat_template())
    return fail(MINNOW_ERR_NO_TEMPLATE, "minnow_chat_apply_json: the model file has no chat template");
  return guard(MINNOW_ERR_TEMPLATE, [&] {
    return copy_text(model->model->apply_chat_template_json(variables_json), text, capacity, n_out, kWhat);
  });
}

minnow_status minnow_json_schema_to_grammar(const char* schema_json, char* grammar, size_t capacity, size_t* n_out) {
  constexpr const char* kWhat = "minnow_json_schema_to_grammar";
  if (schema_json == nullptr) return fail(MINNOW_ERR_INVALID_ARGUMENT, "minnow_json_schema_to_grammar: schema_json is NULL");
  return guard(MINNOW_ERR_INVALID_ARGUMENT,
               [&] { return copy_text(minnow::json_schema_to_grammar(schema_json), grammar, capacity, n_out, kWhat); });
}

}  // extern "C"
