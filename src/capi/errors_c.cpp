// The C API's error channel (a thread-local message), handle registry and version.
#include <cstring>
#include <mutex>
#include <unordered_set>

#include "capi/capi.hpp"

namespace minnow::capi {
namespace {
thread_local std::string t_last_error;

std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}
std::unordered_set<const void*>& registry() {
  static std::unordered_set<const void*> live;
  return live;
}
}  // namespace

minnow_status fail(minnow_status status, const std::string& message) {
  try {
    t_last_error = message;
  } catch (...) {
    t_last_error.clear();  // out of memory for the message itself: the code still tells
  }
  return status;
}

void register_handle(const void* h) {
  std::lock_guard lock(registry_mutex());
  registry().insert(h);
}
bool unregister_handle(const void* h) {
  std::lock_guard lock(registry_mutex());
  return registry().erase(h) != 0;
}
bool is_live(const void* h) {
  std::lock_guard lock(registry_mutex());
  return registry().count(h) != 0;
}

minnow_status copy_text(const std::string& s, char* out, size_t capacity, size_t* n_out, const char* what) {
  if (n_out == nullptr) return fail(MINNOW_ERR_INVALID_ARGUMENT, std::string(what) + ": n_out is NULL");
  if (out == nullptr && capacity > 0)
    return fail(MINNOW_ERR_INVALID_ARGUMENT, std::string(what) + ": the buffer is NULL but its capacity is not 0");
  *n_out = s.size();
  if (s.size() > capacity)
    return fail(MINNOW_ERR_BUFFER_TOO_SMALL, std::string(what) + ": the text needs " + std::to_string(s.size()) +
                                                 " bytes, the buffer holds " + std::to_string(capacity));
  if (!s.empty()) std::memcpy(out, s.data(), s.size());
  if (s.size() < capacity) out[s.size()] = '\0';
  return MINNOW_OK;
}

}  // namespace minnow::capi

extern "C" {

int minnow_abi_version(void) { return MINNOW_ABI_VERSION; }

const char* minnow_version(void) { return MINNOW_VERSION_STRING; }

const char* minnow_last_error(void) { return minnow::capi::t_last_error.c_str(); }

const char* minnow_status_name(int status) {
  switch (status) {
    case MINNOW_OK: return "MINNOW_OK";
    case MINNOW_ERR_INVALID_ARGUMENT: return "MINNOW_ERR_INVALID_ARGUMENT";
    case MINNOW_ERR_BUFFER_TOO_SMALL: return "MINNOW_ERR_BUFFER_TOO_SMALL";
    case MINNOW_ERR_LOAD: return "MINNOW_ERR_LOAD";
    case MINNOW_ERR_CONTEXT_FULL: return "MINNOW_ERR_CONTEXT_FULL";
    case MINNOW_ERR_NO_TEMPLATE: return "MINNOW_ERR_NO_TEMPLATE";
    case MINNOW_ERR_TEMPLATE: return "MINNOW_ERR_TEMPLATE";
    case MINNOW_ERR_OUT_OF_MEMORY: return "MINNOW_ERR_OUT_OF_MEMORY";
    case MINNOW_ERR_INTERNAL: return "MINNOW_ERR_INTERNAL";
  }
  return "MINNOW_ERR_UNKNOWN";
}

}  // extern "C"
