// C API: sessions, evaluation and generation (over minnow::Session).
#include <string>
#include <vector>

#include "capi/capi.hpp"
#include "runtime/draft_model.hpp"
#include "runtime/stop_matcher.hpp"

using minnow::capi::check_handle;
using minnow::capi::fail;
using minnow::capi::guard;

namespace {

minnow_status check_fits(const minnow_session* s, size_t n_tokens, const char* what) {
  const int ctx = s->session->context_size();
  if (n_tokens > static_cast<size_t>(ctx))
    return fail(MINNOW_ERR_CONTEXT_FULL, std::string(what) + ": " + std::to_string(n_tokens) +
                                             " tokens exceed the context size " + std::to_string(ctx));
  return MINNOW_OK;
}

minnow_status check_generate_params(const minnow_generate_params& p, const char* what) {
  if (p.max_tokens < 0) return fail(MINNOW_ERR_INVALID_ARGUMENT, std::string(what) + ": max_tokens must be >= 0 (got " + std::to_string(p.max_tokens) + ")");
  if (p.repeat_last_n < 0) return fail(MINNOW_ERR_INVALID_ARGUMENT, std::string(what) + ": repeat_last_n must be >= 0");
  if (!(p.repeat_penalty > 0)) return fail(MINNOW_ERR_INVALID_ARGUMENT, std::string(what) + ": repeat_penalty must be > 0");
  if (p.temperature != p.temperature || p.top_p != p.top_p || p.min_p != p.min_p || p.presence_penalty != p.presence_penalty ||
      p.frequency_penalty != p.frequency_penalty)
    return fail(MINNOW_ERR_INVALID_ARGUMENT, std::string(what) + ": a sampling parameter is NaN");
  if (p.stop == nullptr && p.n_stop > 0) return fail(MINNOW_ERR_INVALID_ARGUMENT, std::string(what) + ": stop is NULL but n_stop is not 0");
  for (size_t i = 0; i < p.n_stop; ++i)
    if (p.stop[i] == nullptr) return fail(MINNOW_ERR_INVALID_ARGUMENT, std::string(what) + ": stop[" + std::to_string(i) + "] is NULL");
  if (p.lookup_draft < 0 || p.lookup_draft > 64)
    return fail(MINNOW_ERR_INVALID_ARGUMENT, std::string(what) + ": lookup_draft must be 0..64 (got " + std::to_string(p.lookup_draft) + ")");
  return MINNOW_OK;
}

minnow_stop_reason stop_reason(minnow::GenerateResult::Stop s) {
  switch (s) {
    case minnow::GenerateResult::Stop::EndOfGeneration: return MINNOW_STOP_END_OF_GENERATION;
    case minnow::GenerateResult::Stop::MaxTokens: return MINNOW_STOP_MAX_TOKENS;
    case minnow::GenerateResult::Stop::Cancelled: return MINNOW_STOP_CANCELLED;
    case minnow::GenerateResult::Stop::ContextFull: return MINNOW_STOP_CONTEXT_FULL;
  }
  return MINNOW_STOP_CANCELLED;
}

// Generation shared by the text and the token entry points; p already checked.
minnow_status run_generation(minnow_session* s, const std::vector<int32_t>& prompt, const minnow_generate_params& p,
                             minnow_token_callback callback, void* user_data, minnow_generate_result* result,
                             const char* what) {
  if (prompt.empty()) return fail(MINNOW_ERR_INVALID_ARGUMENT, std::string(what) + ": the prompt is empty");
  // Ids outside the vocabulary: Session refuses them (an Error, INVALID_ARGUMENT through guard).
  if (minnow_status st = check_fits(s, prompt.size(), what); st != MINNOW_OK) return st;
  minnow::GenerateOptions o;
  o.max_tokens = p.max_tokens;
  o.sampling = {p.temperature,      p.top_k,           p.top_p, p.min_p, p.repeat_penalty, p.repeat_last_n,
                p.presence_penalty, p.frequency_penalty, p.seed};
  o.stop_at_end_of_generation = p.stop_at_end_of_generation;
  if (p.grammar != nullptr) o.grammar = p.grammar;
  o.lookup_draft = p.lookup_draft;
  o.draft_model = s->draft.get();
  o.draft_max = s->draft_max;
  o.draft_min_p = s->draft_p_min;
  minnow::StopMatcher stops(std::vector<std::string>(p.stop, p.stop + p.n_stop));
  bool user_stopped = false;
  auto emit = [&](const std::string& text, int32_t id) {
    if (callback != nullptr && !callback(text.data(), text.size(), id, user_data)) user_stopped = true;
  };
  if (result) *result = {};
  if (p.max_tokens == 0) {
    s->session->eval(prompt);
    if (result) result->stop_reason = MINNOW_STOP_MAX_TOKENS;
    return MINNOW_OK;
  }
  const minnow::GenerateResult r = s->session->generate(prompt, o, [&](std::string_view piece, int32_t id) {
    if (user_stopped || stops.stopped()) return false;
    const std::string text = stops.push(piece);
    if (id >= 0 || !text.empty()) emit(text, id);  // id -1: the decoder's tail at the end
    return !user_stopped && !stops.stopped();
  });
  // What the matcher still holds could not have begun a stop string: hand it out.
  if (!stops.stopped() && !user_stopped) {
    const std::string tail = stops.flush();
    if (!tail.empty()) emit(tail, -1);
  }
  if (result) {
    result->n_prompt = r.n_prompt;
    result->n_reused = r.n_reused;
    result->n_generated = r.n_generated;
    result->stop_reason = stops.stopped() ? MINNOW_STOP_STRING : stop_reason(r.stop);
    result->prompt_seconds = r.prompt_seconds;
    result->generate_seconds = r.generate_seconds;
  }
  return MINNOW_OK;
}

}  // namespace

extern "C" {

minnow_session_params minnow_session_params_default(void) { return minnow_session_params{0, 0, 0}; }

minnow_status minnow_session_create(minnow_model* model, const minnow_session_params* params, minnow_session** out) {
  if (out == nullptr) return fail(MINNOW_ERR_INVALID_ARGUMENT, "minnow_session_create: out is NULL");
  *out = nullptr;
  if (!check_handle(model, "minnow_session_create", "model")) return MINNOW_ERR_INVALID_ARGUMENT;
  const minnow_session_params p = params ? *params : minnow_session_params_default();
  if (p.n_threads < 0 || p.n_ctx < 0 || p.n_batch < 0)
    return fail(MINNOW_ERR_INVALID_ARGUMENT, "minnow_session_create: n_threads, n_ctx and n_batch must be >= 0");
  const minnow_model_params& d = model->defaults;
  minnow::SessionOptions o;
  o.threads = p.n_threads ? p.n_threads : d.n_threads;
  o.ctx = p.n_ctx ? p.n_ctx : (d.n_ctx ? d.n_ctx : o.ctx);
  if (p.n_batch) o.batch = p.n_batch;
  o.int8_decode = d.int8_activations;
  o.kv_type = d.kv_type == MINNOW_KV_F32    ? minnow::SessionOptions::KvType::F32
              : d.kv_type == MINNOW_KV_Q8_0 ? minnow::SessionOptions::KvType::Q8_0
                                            : minnow::SessionOptions::KvType::F16;
  o.backend = d.backend == MINNOW_BACKEND_VULKAN ? minnow::SessionOptions::Backend::Vulkan : minnow::SessionOptions::Backend::Cpu;
  o.device = d.device;
  o.gpu_layers = d.gpu_layers;
  return guard(MINNOW_ERR_INVALID_ARGUMENT, [&] {
    auto h = std::make_unique<minnow_session>();
    h->model = model->model;
    h->session = std::make_unique<minnow::Session>(*h->model, o);
    h->options = o;
    return minnow::capi::publish(std::move(h), out);
  });
}

minnow_status minnow_session_set_draft(minnow_session* session, minnow_model* draft, int32_t draft_max, float draft_p_min) {
  if (!check_handle(session, "minnow_session_set_draft", "session")) return MINNOW_ERR_INVALID_ARGUMENT;
  if (draft == nullptr) {
    session->draft.reset();
    session->draft_model.reset();
    return MINNOW_OK;
  }
  if (!check_handle(draft, "minnow_session_set_draft", "draft")) return MINNOW_ERR_INVALID_ARGUMENT;
  if (draft_max < 1 || draft_max > 16)
    return fail(MINNOW_ERR_INVALID_ARGUMENT, "minnow_session_set_draft: draft_max must be 1..16 (got " + std::to_string(draft_max) + ")");
  if (!(draft_p_min >= 0.0f && draft_p_min <= 1.0f))
    return fail(MINNOW_ERR_INVALID_ARGUMENT, "minnow_session_set_draft: draft_p_min must be 0..1");
  return guard(MINNOW_ERR_INVALID_ARGUMENT, [&] {
    minnow::check_draft_vocabulary(*draft->model, *session->model, "minnow_session_set_draft");
    minnow::SessionOptions d = session->options;
    d.ctx = session->session->context_size();
    d.int8_decode = true;  // proposals are checked by the model: their precision only changes how many are kept
    auto ds = std::make_unique<minnow::Session>(*draft->model, d);
    session->draft = std::move(ds);  // the old draft session goes before its model
    session->draft_model = draft->model;
    session->draft_max = draft_max;
    session->draft_p_min = draft_p_min;
    return MINNOW_OK;
  });
}

void minnow_session_free(minnow_session* session) { minnow::capi::destroy(session); }

minnow_status minnow_session_reset(minnow_session* session) {
  if (!check_handle(session, "minnow_session_reset", "session")) return MINNOW_ERR_INVALID_ARGUMENT;
  session->session->reset();
  return MINNOW_OK;
}

int32_t minnow_session_n_past(const minnow_session* session) {
  if (session == nullptr || !minnow::capi::is_live(session)) return -1;
  return session->session->n_past();
}

int32_t minnow_session_n_ctx(const minnow_session* session) {
  if (session == nullptr || !minnow::capi::is_live(session)) return -1;
  return session->session->context_size();
}

minnow_status minnow_session_eval(minnow_session* session, const int32_t* tokens, size_t n_tokens, float* logits,
                                  size_t capacity) {
  constexpr const char* kWhat = "minnow_session_eval";
  if (!check_handle(session, kWhat, "session")) return MINNOW_ERR_INVALID_ARGUMENT;
  if (tokens == nullptr || n_tokens == 0) return fail(MINNOW_ERR_INVALID_ARGUMENT, "minnow_session_eval: no tokens");
  const size_t vocab = static_cast<size_t>(session->model->info().vocab_size);
  if (logits == nullptr || capacity < vocab)
    return fail(MINNOW_ERR_BUFFER_TOO_SMALL, "minnow_session_eval: logits needs " + std::to_string(vocab) + " floats");
  if (minnow_status st = check_fits(session, n_tokens, kWhat); st != MINNOW_OK) return st;
  return guard(MINNOW_ERR_INVALID_ARGUMENT, [&] {
    const std::span<const float> l = session->session->eval({tokens, n_tokens});
    std::copy(l.begin(), l.end(), logits);
    return MINNOW_OK;
  });
}

minnow_status minnow_session_eval_all(minnow_session* session, const int32_t* tokens, size_t n_tokens, float* logits,
                                      size_t capacity) {
  constexpr const char* kWhat = "minnow_session_eval_all";
  if (!check_handle(session, kWhat, "session")) return MINNOW_ERR_INVALID_ARGUMENT;
  if (tokens == nullptr || n_tokens == 0) return fail(MINNOW_ERR_INVALID_ARGUMENT, "minnow_session_eval_all: no tokens");
  if (minnow_status st = check_fits(session, n_tokens, kWhat); st != MINNOW_OK) return st;
  const size_t vocab = static_cast<size_t>(session->model->info().vocab_size);
  if (logits == nullptr || capacity / vocab < n_tokens)
    return fail(MINNOW_ERR_BUFFER_TOO_SMALL, "minnow_session_eval_all: logits needs " + std::to_string(n_tokens) +
                                                 " x " + std::to_string(vocab) + " floats");
  return guard(MINNOW_ERR_INVALID_ARGUMENT, [&] {
    session->session->eval_all({tokens, n_tokens}, [&](int pos, std::span<const float> l) {
      std::copy(l.begin(), l.end(), logits + static_cast<size_t>(pos) * vocab);
    });
    return MINNOW_OK;
  });
}

minnow_generate_params minnow_generate_params_default(void) {
  const minnow::SamplingOptions s;
  minnow_generate_params p{};
  p.max_tokens = minnow::GenerateOptions{}.max_tokens;
  p.temperature = s.temperature;
  p.top_k = s.top_k;
  p.top_p = s.top_p;
  p.min_p = s.min_p;
  p.repeat_penalty = s.repeat_penalty;
  p.repeat_last_n = s.repeat_last_n;
  p.presence_penalty = s.presence_penalty;
  p.frequency_penalty = s.frequency_penalty;
  p.seed = s.seed;
  p.stop = nullptr;
  p.n_stop = 0;
  p.stop_at_end_of_generation = true;
  p.parse_special = true;
  return p;
}

minnow_status minnow_generate(minnow_session* session, const char* prompt, const minnow_generate_params* params,
                              minnow_token_callback callback, void* user_data, minnow_generate_result* result) {
  constexpr const char* kWhat = "minnow_generate";
  if (!check_handle(session, kWhat, "session")) return MINNOW_ERR_INVALID_ARGUMENT;
  if (prompt == nullptr) return fail(MINNOW_ERR_INVALID_ARGUMENT, "minnow_generate: prompt is NULL");
  const minnow_generate_params p = params ? *params : minnow_generate_params_default();
  if (minnow_status st = check_generate_params(p, kWhat); st != MINNOW_OK) return st;
  return guard(MINNOW_ERR_INVALID_ARGUMENT, [&] {
    return run_generation(session, session->model->tokenize(prompt, p.parse_special), p, callback, user_data, result, kWhat);
  });
}

minnow_status minnow_generate_tokens(minnow_session* session, const int32_t* prompt, size_t n_prompt,
                                     const minnow_generate_params* params, minnow_token_callback callback,
                                     void* user_data, minnow_generate_result* result) {
  constexpr const char* kWhat = "minnow_generate_tokens";
  if (!check_handle(session, kWhat, "session")) return MINNOW_ERR_INVALID_ARGUMENT;
  if (prompt == nullptr && n_prompt > 0) return fail(MINNOW_ERR_INVALID_ARGUMENT, "minnow_generate_tokens: prompt is NULL");
  const minnow_generate_params p = params ? *params : minnow_generate_params_default();
  if (minnow_status st = check_generate_params(p, kWhat); st != MINNOW_OK) return st;
  return guard(MINNOW_ERR_INVALID_ARGUMENT, [&] {
    return run_generation(session, std::vector<int32_t>(prompt, prompt + n_prompt), p, callback, user_data, result, kWhat);
  });
}

minnow_status minnow_session_cancel(minnow_session* session) {
  if (!check_handle(session, "minnow_session_cancel", "session")) return MINNOW_ERR_INVALID_ARGUMENT;
  session->session->cancel();
  return MINNOW_OK;
}

}  // extern "C"
