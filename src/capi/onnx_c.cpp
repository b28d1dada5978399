// C API: ONNX models (over minnow::onnx::Interpreter / Session / Tensor).
#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "capi/capi.hpp"
#include "minnow/onnx.hpp"

using minnow::capi::check_handle;
using minnow::capi::fail;
using minnow::capi::guard;
namespace onnx = minnow::onnx;

struct minnow_onnx_model {
  std::shared_ptr<const onnx::Interpreter> net;
};

// The C++ session is made at the first run, from the shapes of the inputs set by then
// (until then they wait in `pending`); later inputs are written into it directly.
struct minnow_onnx_session {
  std::shared_ptr<const onnx::Interpreter> net;
  minnow_onnx_session_params params;
  std::map<std::string, onnx::Tensor> pending;
  std::unique_ptr<onnx::Session> session;
  bool last_run_failed = false;  // outputs may then hold parts of two runs: not handed out
};

namespace {

const onnx::IoInfo* find_io(const std::vector<onnx::IoInfo>& ios, const char* name) {
  for (const auto& io : ios)
    if (io.name == name) return &io;
  return nullptr;
}

bool known_dtype(int32_t t) {
  switch (t) {
    case MINNOW_ONNX_FLOAT: case MINNOW_ONNX_UINT8: case MINNOW_ONNX_INT8: case MINNOW_ONNX_INT32:
    case MINNOW_ONNX_INT64: case MINNOW_ONNX_BOOL: case MINNOW_ONNX_DOUBLE: return true;
    default: return false;
  }
}

}  // namespace

extern "C" {

minnow_status minnow_onnx_load(const char* path, minnow_onnx_model** out) {
  if (out == nullptr) return fail(MINNOW_ERR_INVALID_ARGUMENT, "minnow_onnx_load: out is NULL");
  *out = nullptr;
  if (path == nullptr) return fail(MINNOW_ERR_INVALID_ARGUMENT, "minnow_onnx_load: path is NULL");
  return guard(MINNOW_ERR_LOAD, [&] {
    auto h = std::make_unique<minnow_onnx_model>();
    h->net = onnx::Interpreter::load(path);
    return minnow::capi::publish(std::move(h), out);
  });
}

void minnow_onnx_free(minnow_onnx_model* model) { minnow::capi::destroy(model); }

int32_t minnow_onnx_n_inputs(const minnow_onnx_model* model) {
  return minnow::capi::is_live(model) ? static_cast<int32_t>(model->net->inputs().size()) : 0;
}

int32_t minnow_onnx_n_outputs(const minnow_onnx_model* model) {
  return minnow::capi::is_live(model) ? static_cast<int32_t>(model->net->outputs().size()) : 0;
}

const char* minnow_onnx_input_name(const minnow_onnx_model* model, int32_t i) {
  if (i < 0 || i >= minnow_onnx_n_inputs(model)) return nullptr;
  return model->net->inputs()[static_cast<size_t>(i)].name.c_str();
}

const char* minnow_onnx_output_name(const minnow_onnx_model* model, int32_t i) {
  if (i < 0 || i >= minnow_onnx_n_outputs(model)) return nullptr;
  return model->net->outputs()[static_cast<size_t>(i)].name.c_str();
}

minnow_onnx_session_params minnow_onnx_session_params_default(void) {
  minnow_onnx_session_params p{};
  p.n_threads = 0;
  p.optimize = true;
  return p;
}

minnow_status minnow_onnx_session_create(const minnow_onnx_model* model, const minnow_onnx_session_params* params,
                                         minnow_onnx_session** out) {
  if (out == nullptr) return fail(MINNOW_ERR_INVALID_ARGUMENT, "minnow_onnx_session_create: out is NULL");
  *out = nullptr;
  if (!check_handle(model, "minnow_onnx_session_create", "model")) return MINNOW_ERR_INVALID_ARGUMENT;
  const minnow_onnx_session_params p = params ? *params : minnow_onnx_session_params_default();
  if (p.n_threads < 0)
    return fail(MINNOW_ERR_INVALID_ARGUMENT,
                "minnow_onnx_session_create: n_threads must be >= 0 (got " + std::to_string(p.n_threads) + ")");
  return guard(MINNOW_ERR_INVALID_ARGUMENT, [&] {
    auto h = std::make_unique<minnow_onnx_session>();
    h->net = model->net;
    h->params = p;
    return minnow::capi::publish(std::move(h), out);
  });
}

void minnow_onnx_session_free(minnow_onnx_session* session) { minnow::capi::destroy(session); }

minnow_status minnow_onnx_set_input(minnow_onnx_session* session, const char* name, int32_t dtype, const int64_t* shape,
                                    int32_t rank, const void* data) {
  if (!check_handle(session, "minnow_onnx_set_input", "session")) return MINNOW_ERR_INVALID_ARGUMENT;
  if (name == nullptr) return fail(MINNOW_ERR_INVALID_ARGUMENT, "minnow_onnx_set_input: name is NULL");
  const onnx::IoInfo* io = find_io(session->net->inputs(), name);
  if (io == nullptr) return fail(MINNOW_ERR_INVALID_ARGUMENT, std::string("minnow_onnx_set_input: the model has no input '") + name + "'");
  if (!known_dtype(dtype))
    return fail(MINNOW_ERR_INVALID_ARGUMENT, "minnow_onnx_set_input: dtype " + std::to_string(dtype) + " is not a minnow_onnx_dtype");
  if (dtype != static_cast<int32_t>(io->dtype))
    return fail(MINNOW_ERR_INVALID_ARGUMENT, std::string("minnow_onnx_set_input: input '") + name + "' takes " +
                                                 onnx::dtype_name(io->dtype) + ", not " +
                                                 onnx::dtype_name(static_cast<onnx::DataType>(dtype)));
  if (rank < 0 || (rank > 0 && shape == nullptr))
    return fail(MINNOW_ERR_INVALID_ARGUMENT, "minnow_onnx_set_input: rank must be >= 0 and shape not NULL");
  std::vector<int64_t> dims(shape, shape + rank);
  // Refused before the tensor is touched: a failed call leaves the input as it was.
  const bool no_elements = std::any_of(dims.begin(), dims.end(), [](int64_t d) { return d <= 0; });
  if (data == nullptr && !no_elements) return fail(MINNOW_ERR_INVALID_ARGUMENT, "minnow_onnx_set_input: data is NULL");
  return guard(MINNOW_ERR_INVALID_ARGUMENT, [&] {
    // resize checks every dimension and the size before it changes anything.
    const auto fill = [&](onnx::Tensor& t) {
      t.resize(static_cast<onnx::DataType>(dtype), dims);
      if (t.bytes() > 0) std::memcpy(t.raw(), data, t.bytes());
    };
    if (session->session) {
      fill(session->session->input(name));
    } else {  // kept only once whole: a refused input stays unset
      onnx::Tensor t;
      fill(t);
      session->pending[name] = std::move(t);
    }
    return MINNOW_OK;
  });
}

minnow_status minnow_onnx_run(minnow_onnx_session* session) {
  if (!check_handle(session, "minnow_onnx_run", "session")) return MINNOW_ERR_INVALID_ARGUMENT;
  return guard(MINNOW_ERR_INVALID_ARGUMENT, [&] {
    if (!session->session) {
      std::map<std::string, std::vector<int64_t>> shapes;
      for (const auto& io : session->net->inputs()) {
        auto it = session->pending.find(io.name);
        if (it == session->pending.end())
          return fail(MINNOW_ERR_INVALID_ARGUMENT, "minnow_onnx_run: input '" + io.name + "' was not set");
        shapes[io.name] = it->second.shape();
      }
      onnx::SessionOptions o;
      o.n_threads = session->params.n_threads;
      o.optimize = session->params.optimize;
      auto s = session->net->create_session(shapes, o);
      for (auto& [name, t] : session->pending) s->input(name) = std::move(t);
      session->pending.clear();
      session->session = std::move(s);
    }
    session->last_run_failed = true;
    session->session->run();
    session->last_run_failed = false;
    return MINNOW_OK;
  });
}

minnow_status minnow_onnx_get_output(minnow_onnx_session* session, const char* name, minnow_onnx_tensor* out) {
  if (!check_handle(session, "minnow_onnx_get_output", "session")) return MINNOW_ERR_INVALID_ARGUMENT;
  if (name == nullptr || out == nullptr)
    return fail(MINNOW_ERR_INVALID_ARGUMENT, "minnow_onnx_get_output: name and out must not be NULL");
  if (find_io(session->net->outputs(), name) == nullptr)
    return fail(MINNOW_ERR_INVALID_ARGUMENT, std::string("minnow_onnx_get_output: the model has no output '") + name + "'");
  if (!session->session || session->session->runs() == 0)
    return fail(MINNOW_ERR_INVALID_ARGUMENT, "minnow_onnx_get_output: the session has not run yet");
  if (session->last_run_failed)
    return fail(MINNOW_ERR_INVALID_ARGUMENT, "minnow_onnx_get_output: the last run failed (its error said why): run again");
  return guard(MINNOW_ERR_INTERNAL, [&] {
    const onnx::Tensor& t = session->session->output(name);
    if (t.rank() > 8)
      return fail(MINNOW_ERR_INVALID_ARGUMENT, std::string("minnow_onnx_get_output: output '") + name + "' has rank " +
                                                   std::to_string(t.rank()) + " (the C view holds 8)");
    *out = minnow_onnx_tensor{};
    out->dtype = static_cast<int32_t>(t.dtype());
    out->rank = t.rank();
    for (int i = 0; i < t.rank(); ++i) out->shape[i] = t.shape()[static_cast<size_t>(i)];
    out->n_elements = t.size();
    out->data = t.raw();
    return MINNOW_OK;
  });
}

}  // extern "C"
