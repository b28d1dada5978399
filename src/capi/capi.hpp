// What the C API's files share: the handle structs behind the opaque C types, the
// registry that tells live handles from freed ones, and the guard that turns every
// C++ exception into a status code and a thread-local message.
#pragma once
#include <exception>
#include <memory>
#include <new>
#include <string>

#include "base/error.hpp"
#include "minnow/llm.hpp"
#include "minnow/minnow.h"

struct minnow_model {
  std::shared_ptr<const minnow::Model> model;  // sessions share it: freeing the handle first is safe
  minnow_model_params defaults;
};

struct minnow_session {
  std::shared_ptr<const minnow::Model> model;  // declared first: outlives the session
  std::unique_ptr<minnow::Session> session;
  minnow::SessionOptions options;  // the session's, which a draft's session follows
  // minnow_session_set_draft's: the draft model and its own session, or none.
  std::shared_ptr<const minnow::Model> draft_model;
  std::unique_ptr<minnow::Session> draft;
  int draft_max = 8;
  float draft_p_min = 0.5f;
};

namespace minnow::capi {

// Sets this thread's message and returns status.
minnow_status fail(minnow_status status, const std::string& message);

// Live handles: a pointer not registered (never created, or freed) is refused.
void register_handle(const void* h);
bool unregister_handle(const void* h);  // false: h was not live
bool is_live(const void* h);

// Registers a new handle and hands it to the caller.
template <typename T>
minnow_status publish(std::unique_ptr<T> h, T** out) {
  register_handle(h.get());
  *out = h.release();
  return MINNOW_OK;
}

// Frees a live handle; NULL, freed and foreign pointers are ignored. The check and the
// removal are one step, so two threads freeing the same handle free it once.
template <typename T>
void destroy(T* h) {
  if (h != nullptr && unregister_handle(h)) delete h;
}

// Runs fn (returning a minnow_status); an exception becomes on_error (minnow::Error, i.e.
// bad input or an unreadable file), MINNOW_ERR_OUT_OF_MEMORY or MINNOW_ERR_INTERNAL.
template <typename Fn>
minnow_status guard(minnow_status on_error, Fn&& fn) noexcept {
  try {
    return fn();
  } catch (const std::bad_alloc&) {
    return fail(MINNOW_ERR_OUT_OF_MEMORY, "out of memory");
  } catch (const Error& e) {
    return fail(on_error, e.what());
  } catch (const std::exception& e) {
    return fail(MINNOW_ERR_INTERNAL, std::string("internal error: ") + e.what());
  } catch (...) {
    return fail(MINNOW_ERR_INTERNAL, "internal error: unknown exception");
  }
}

// Checks a handle argument; `what` names the function ("minnow_tokenize").
template <typename T>
bool check_handle(const T* h, const char* what, const char* arg) {
  if (h == nullptr) return fail(MINNOW_ERR_INVALID_ARGUMENT, std::string(what) + ": " + arg + " is NULL"), false;
  if (!is_live(h))
    return fail(MINNOW_ERR_INVALID_ARGUMENT, std::string(what) + ": " + arg + " is not a live handle (freed already?)"), false;
  return true;
}

// Copies n bytes of text (NUL-terminated when there is room) into a caller buffer.
minnow_status copy_text(const std::string& s, char* out, size_t capacity, size_t* n_out, const char* what);

}  // namespace minnow::capi
