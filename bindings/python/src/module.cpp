// minnow._minnow: a thin nanobind layer over minnow's C API (include/minnow/minnow.h).
// The Python API people use is bindings/python/minnow/__init__.py; this file converts
// types, raises failures as minnow.MinnowError and manages the GIL: it is released
// around every C call, and a token callback takes it back only for Python work.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "minnow/minnow.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace {

PyObject* g_error = nullptr;             // minnow.MinnowError(RuntimeError)
PyObject* g_invalid_argument = nullptr;  // minnow.InvalidArgumentError(MinnowError, ValueError)
unsigned long g_main_thread = 0;         // the thread where Python runs signal handlers

// Engine text is UTF-8; a stray byte becomes U+FFFD rather than an exception.
nb::str decode(const char* text, size_t len) {
  return nb::steal<nb::str>(PyUnicode_DecodeUTF8(text, static_cast<Py_ssize_t>(len), "replace"));
}

nb::str decode_c(const char* text) { return text ? decode(text, std::strlen(text)) : nb::str(""); }

// A C call's status and message, captured where the call ran (minnow_last_error is
// thread-local and the GIL may be released).
struct Outcome {
  minnow_status status = MINNOW_OK;
  std::string message;
};

Outcome outcome(minnow_status s) { return {s, s == MINNOW_OK ? std::string() : std::string(minnow_last_error())}; }

[[noreturn]] void raise(minnow_status s, const std::string& message) {
  nb::handle type = s == MINNOW_ERR_INVALID_ARGUMENT ? g_invalid_argument : g_error;
  nb::object e = type(decode(message.data(), message.size()));
  e.attr("status") = minnow_status_name(s);
  PyErr_SetObject(type.ptr(), e.ptr());
  throw nb::python_error();
}

void check(const Outcome& o) {
  if (o.status != MINNOW_OK) raise(o.status, o.message);
}

template <class F>
void call(F&& f) {
  Outcome o;
  {
    nb::gil_scoped_release nogil;
    o = outcome(f());
  }
  check(o);
}

// Variable-size outputs: f(buffer, capacity, &n) with a guess, then once more with the
// size the first call asked for (+1 for the NUL text gets when there is room).
template <class T, class F>
std::vector<T> sized(size_t guess, F&& f) {
  std::vector<T> buf(guess + 1);
  size_t n = 0;
  Outcome o;
  {
    nb::gil_scoped_release nogil;
    minnow_status s = f(buf.data(), buf.size(), &n);
    if (s == MINNOW_ERR_BUFFER_TOO_SMALL) {
      buf.resize(n + 1);
      s = f(buf.data(), buf.size(), &n);
    }
    o = outcome(s);
  }
  check(o);
  buf.resize(n);
  return buf;
}

void check_no_nul(const std::string& s, const char* what) {
  if (s.find('\0') != std::string::npos) raise(MINNOW_ERR_INVALID_ARGUMENT, std::string(what) + " contains a NUL character");
}

// Shared by the Python Model and its sessions (and held across calls that release the
// GIL), so closing the model frees it only once nothing uses it any more.
using ModelRef = std::shared_ptr<minnow_model>;

struct Model {
  ModelRef ref;
  ModelRef hold() const {
    if (!ref) raise(MINNOW_ERR_INVALID_ARGUMENT, "the model is closed");
    return ref;
  }
};

nb::dict info_dict(const ModelRef& m) {
  minnow_model_info i{};
  call([&] { return minnow_model_get_info(m.get(), &i); });
  nb::dict d;
  d["architecture"] = decode_c(i.architecture);
  d["name"] = decode_c(i.name);
  d["n_layers"] = i.n_layers;
  d["d_model"] = i.d_model;
  d["n_heads"] = i.n_heads;
  d["n_kv_heads"] = i.n_kv_heads;
  d["d_ff"] = i.d_ff;
  d["vocab_size"] = i.vocab_size;
  d["context_length"] = i.context_length;
  d["n_params"] = i.n_params;
  d["weight_bytes"] = i.weight_bytes;
  d["bos_id"] = i.bos_id;
  d["eos_id"] = i.eos_id;
  d["has_chat_template"] = i.has_chat_template;
  return d;
}

struct Session;
thread_local const Session* t_running = nullptr;  // the session this thread is inside

struct Session {
  ModelRef model;
  std::atomic<minnow_session*> handle{nullptr};  // null once closed
  std::mutex busy;                               // one thread at a time, as the C API asks
  size_t vocab = 0;

  ~Session() { minnow_session_free(handle.exchange(nullptr)); }

  // f(session) without the GIL, after any other thread's call on this session. A token
  // callback that calls back into its own session would wait on itself: refused.
  template <class F>
  Outcome run(F&& f) {
    if (t_running == this)
      raise(MINNOW_ERR_INVALID_ARGUMENT, "a session cannot be used from its own token callback");
    nb::gil_scoped_release nogil;
    std::lock_guard<std::mutex> lock(busy);
    minnow_session* s = handle.load();
    if (!s) return {MINNOW_ERR_INVALID_ARGUMENT, "the session is closed"};
    t_running = this;
    Outcome o = outcome(f(s));
    t_running = nullptr;
    return o;
  }
};

// One generation's state, shared with on_piece.
struct Generation {
  nb::handle callback;  // a callable, or None to collect the text here
  bool check_signals = false;
  std::chrono::steady_clock::time_point last_check;
  std::string text;
  std::optional<nb::python_error> error;  // raised by the callback or a signal handler
  bool out_of_memory = false;
};

bool on_piece(const char* piece, size_t len, int32_t token, void* user) noexcept {
  auto& g = *static_cast<Generation*>(user);
  try {
    // Ctrl-C: Python's handler only flags the signal; PyErr_CheckSignals runs it (raising
    // KeyboardInterrupt). It needs the GIL, which a busy Python thread may hold for up to
    // the switch interval (5 ms), so look every 20 ms rather than at every token.
    bool signals = false;
    if (g.check_signals) {
      auto now = std::chrono::steady_clock::now();
      signals = now - g.last_check >= std::chrono::milliseconds(20);
      if (signals) g.last_check = now;
    }
    if (g.callback.is_none()) {
      g.text.append(piece, len);
      if (!signals) return true;  // no Python work: the GIL stays with others
    }
    nb::gil_scoped_acquire gil;
    try {
      if (signals && PyErr_CheckSignals() != 0) throw nb::python_error();
      if (g.callback.is_none()) return true;
      nb::object r = g.callback(decode(piece, len), token);
      if (r.is_none()) return true;
      int keep = PyObject_IsTrue(r.ptr());
      if (keep < 0) throw nb::python_error();
      return keep == 1;
    } catch (nb::python_error& e) {
      g.error.emplace(std::move(e));
    } catch (const std::exception& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
      g.error.emplace();
    }
  } catch (...) {  // std::bad_alloc from the text; nothing may unwind into the C API
    g.out_of_memory = true;
  }
  return false;
}

const char* stop_reason_name(minnow_stop_reason r) {
  switch (r) {
    case MINNOW_STOP_END_OF_GENERATION: return "end_of_generation";
    case MINNOW_STOP_MAX_TOKENS: return "max_tokens";
    case MINNOW_STOP_STRING: return "stop_string";
    case MINNOW_STOP_CANCELLED: return "cancelled";
    case MINNOW_STOP_CONTEXT_FULL: return "context_full";
  }
  return "unknown";
}

// Returns (text or None when a callback got the pieces, result dict).
// params: a GenerateParams, with the GBNF text (if any) as its dynamic attribute "grammar".
nb::tuple generate(Session& self, nb::handle prompt, nb::handle params, const std::vector<std::string>& stop,
                   nb::handle callback) {
  minnow_generate_params p = nb::cast<const minnow_generate_params&>(params);
  std::string grammar;
  if (nb::hasattr(params, "grammar") && !params.attr("grammar").is_none()) {
    grammar = nb::cast<std::string>(params.attr("grammar"));
    check_no_nul(grammar, "the grammar");
    p.grammar = grammar.c_str();
  }
  std::vector<const char*> stops;
  for (const std::string& s : stop) {
    check_no_nul(s, "a stop string");
    stops.push_back(s.c_str());
  }
  p.stop = stops.data();
  p.n_stop = stops.size();
  Generation g;
  g.callback = callback;
  g.check_signals = PyThread_get_thread_ident() == g_main_thread;
  minnow_generate_result r{};
  Outcome o;
  if (nb::isinstance<nb::str>(prompt)) {
    std::string text = nb::cast<std::string>(prompt);
    check_no_nul(text, "the prompt");
    o = self.run([&](minnow_session* s) { return minnow_generate(s, text.c_str(), &p, on_piece, &g, &r); });
  } else {
    std::vector<int32_t> ids = nb::cast<std::vector<int32_t>>(prompt);
    o = self.run([&](minnow_session* s) {
      return minnow_generate_tokens(s, ids.data(), ids.size(), &p, on_piece, &g, &r);
    });
  }
  if (g.error) {
    g.error->restore();
    throw nb::python_error();
  }
  if (g.out_of_memory) throw std::bad_alloc();
  check(o);
  nb::dict result;
  result["n_prompt"] = r.n_prompt;
  result["n_reused"] = r.n_reused;
  result["n_generated"] = r.n_generated;
  result["stop_reason"] = stop_reason_name(r.stop_reason);
  result["prompt_seconds"] = r.prompt_seconds;
  result["generate_seconds"] = r.generate_seconds;
  nb::object text = callback.is_none() ? nb::object(decode(g.text.data(), g.text.size())) : nb::none();
  return nb::make_tuple(text, result);
}

// Logits go straight into a buffer that the returned numpy array owns (no copy).
using Logits1 = nb::ndarray<nb::numpy, float, nb::ndim<1>>;
using Logits2 = nb::ndarray<nb::numpy, float, nb::ndim<2>>;

nb::capsule owner_of(float* buf) {
  return nb::capsule(buf, [](void* p) noexcept { delete[] static_cast<float*>(p); });
}

Logits1 eval(Session& self, const std::vector<int32_t>& tokens) {
  float* buf = new float[self.vocab];
  nb::capsule owner = owner_of(buf);
  check(self.run([&](minnow_session* s) { return minnow_session_eval(s, tokens.data(), tokens.size(), buf, self.vocab); }));
  return Logits1(buf, {self.vocab}, owner);
}

Logits2 eval_all(Session& self, const std::vector<int32_t>& tokens) {
  size_t n = tokens.size() * self.vocab;
  float* buf = new float[n > 0 ? n : 1];
  nb::capsule owner = owner_of(buf);
  check(self.run([&](minnow_session* s) { return minnow_session_eval_all(s, tokens.data(), tokens.size(), buf, n); }));
  return Logits2(buf, {tokens.size(), self.vocab}, owner);
}

// --- ONNX: numpy arrays in and out, element types by ONNX's numbering.
using AnyArray = nb::ndarray<nb::c_contig, nb::device::cpu>;

int32_t onnx_dtype_of(const nb::dlpack::dtype& t) {
  using C = nb::dlpack::dtype_code;
  if (t.lanes != 1) return 0;
  if (t.code == static_cast<uint8_t>(C::Float) && t.bits == 32) return MINNOW_ONNX_FLOAT;
  if (t.code == static_cast<uint8_t>(C::Float) && t.bits == 64) return MINNOW_ONNX_DOUBLE;
  if (t.code == static_cast<uint8_t>(C::Int) && t.bits == 64) return MINNOW_ONNX_INT64;
  if (t.code == static_cast<uint8_t>(C::Int) && t.bits == 32) return MINNOW_ONNX_INT32;
  if (t.code == static_cast<uint8_t>(C::Int) && t.bits == 8) return MINNOW_ONNX_INT8;
  if (t.code == static_cast<uint8_t>(C::UInt) && t.bits == 8) return MINNOW_ONNX_UINT8;
  if (t.code == static_cast<uint8_t>(C::Bool) && t.bits == 8) return MINNOW_ONNX_BOOL;
  return 0;
}

nb::dlpack::dtype dlpack_of(int32_t onnx_dtype) {
  switch (onnx_dtype) {
    case MINNOW_ONNX_DOUBLE: return nb::dtype<double>();
    case MINNOW_ONNX_INT64: return nb::dtype<int64_t>();
    case MINNOW_ONNX_INT32: return nb::dtype<int32_t>();
    case MINNOW_ONNX_INT8: return nb::dtype<int8_t>();
    case MINNOW_ONNX_UINT8: return nb::dtype<uint8_t>();
    case MINNOW_ONNX_BOOL: return nb::dtype<bool>();
    default: return nb::dtype<float>();
  }
}

size_t onnx_dtype_bytes(int32_t onnx_dtype) {
  switch (onnx_dtype) {
    case MINNOW_ONNX_DOUBLE: case MINNOW_ONNX_INT64: return 8;
    case MINNOW_ONNX_INT8: case MINNOW_ONNX_UINT8: case MINNOW_ONNX_BOOL: return 1;
    default: return 4;
  }
}

nb::handle new_exception(const char* name, const char* doc, PyObject* base) {
  PyObject* type = PyErr_NewExceptionWithDoc(name, doc, base, nullptr);
  if (!type) throw nb::python_error();
  return type;  // kept for the life of the process
}

}  // namespace

struct OnnxModel {
  minnow_onnx_model* handle = nullptr;
  explicit OnnxModel(minnow_onnx_model* h) : handle(h) {}
  ~OnnxModel() { minnow_onnx_free(handle); }
};

// An ONNX session; one run() at a time (the C API's rule), closing waits for it.
struct OnnxSession {
  minnow_onnx_session* handle = nullptr;
  std::vector<std::string> outputs;
  std::mutex busy;
  ~OnnxSession() { minnow_onnx_session_free(handle); }
};

// An embedder handle; one embed() at a time (the C API's rule), closing waits for it.
struct Embedder {
  minnow_embedder* handle = nullptr;
  std::mutex busy;
  explicit Embedder(minnow_embedder* h) : handle(h) {}
  ~Embedder() { minnow_embedder_free(handle); }
};

NB_MODULE(_minnow, m) {
  m.doc() = "minnow's C API for Python (use the minnow package, not this module)";
  g_main_thread = nb::cast<unsigned long>(nb::module_::import_("threading").attr("main_thread")().attr("ident"));
  g_error = new_exception("minnow.MinnowError",
                          "A minnow call failed; .status names the C API status (\"MINNOW_ERR_LOAD\"...).",
                          PyExc_RuntimeError).ptr();
  nb::object bases = nb::make_tuple(nb::handle(g_error), nb::handle(PyExc_ValueError));
  g_invalid_argument = new_exception("minnow.InvalidArgumentError",
                                     "A bad argument (also a ValueError): out of range, closed handle, bad UTF-8 or JSON.",
                                     bases.ptr()).ptr();
  m.attr("MinnowError") = nb::handle(g_error);
  m.attr("InvalidArgumentError") = nb::handle(g_invalid_argument);
  m.attr("ABI_VERSION") = MINNOW_ABI_VERSION;
  m.def("abi_version", &minnow_abi_version);
  m.def("version", [] { return std::string(minnow_version()); });

  nb::class_<minnow_generate_params>(m, "GenerateParams", nb::dynamic_attr())
      .def("__init__", [](minnow_generate_params* p) { new (p) minnow_generate_params(minnow_generate_params_default()); })
      .def_rw("max_tokens", &minnow_generate_params::max_tokens)
      .def_rw("temperature", &minnow_generate_params::temperature)
      .def_rw("top_k", &minnow_generate_params::top_k)
      .def_rw("top_p", &minnow_generate_params::top_p)
      .def_rw("min_p", &minnow_generate_params::min_p)
      .def_rw("repeat_penalty", &minnow_generate_params::repeat_penalty)
      .def_rw("repeat_last_n", &minnow_generate_params::repeat_last_n)
      .def_rw("presence_penalty", &minnow_generate_params::presence_penalty)
      .def_rw("frequency_penalty", &minnow_generate_params::frequency_penalty)
      .def_rw("seed", &minnow_generate_params::seed)
      .def_rw("stop_at_end_of_generation", &minnow_generate_params::stop_at_end_of_generation)
      .def_rw("parse_special", &minnow_generate_params::parse_special)
      .def_rw("lookup_draft", &minnow_generate_params::lookup_draft);

  m.def(
      "json_schema_to_grammar",
      [](const std::string& schema) {
        check_no_nul(schema, "the schema");
        std::vector<char> text = sized<char>(schema.size() * 4 + 256, [&](char* buf, size_t cap, size_t* n) {
          return minnow_json_schema_to_grammar(schema.c_str(), buf, cap, n);
        });
        return decode(text.data(), text.size());
      },
      "schema_json"_a);

  nb::class_<Embedder>(m, "Embedder")
      .def("__init__",
           [](Embedder* self, const std::string& path, int32_t n_threads, int32_t precision) {
             check_no_nul(path, "the path");
             minnow_embedder_params p = minnow_embedder_params_default();
             p.n_threads = n_threads;
             p.precision = precision;
             minnow_embedder* raw = nullptr;
             call([&] { return minnow_embedder_load(path.c_str(), &p, &raw); });
             new (self) Embedder{raw};
           },
           "path"_a, "n_threads"_a, "precision"_a)
      .def_prop_ro("dim", [](const Embedder& self) { return minnow_embedder_dim(self.handle); })
      .def("embed",
           [](Embedder& self, const std::vector<std::string>& texts) {
             if (!self.handle) raise(MINNOW_ERR_INVALID_ARGUMENT, "the embedder is closed");
             const auto dim = static_cast<size_t>(minnow_embedder_dim(self.handle));
             std::vector<const char*> ptrs;
             std::vector<size_t> lengths;
             for (const std::string& t : texts) {
               ptrs.push_back(t.data());
               lengths.push_back(t.size());
             }
             std::vector<float> out(texts.size() * dim);
             call([&] {
               std::lock_guard<std::mutex> lock(self.busy);
               return minnow_embed(self.handle, ptrs.data(), lengths.data(), texts.size(), out.data(), out.size(), nullptr);
             });
             nb::list rows;
             for (size_t i = 0; i < texts.size(); ++i) {
               nb::list row;
               for (size_t k = 0; k < dim; ++k) row.append(out[i * dim + k]);
               rows.append(row);
             }
             return rows;
           },
           "texts"_a)
      .def("close", [](Embedder& self) {
        nb::gil_scoped_release nogil;
        std::lock_guard<std::mutex> lock(self.busy);
        minnow_embedder_free(self.handle);
        self.handle = nullptr;
      })
      .def_prop_ro("closed", [](const Embedder& self) { return self.handle == nullptr; });

  nb::class_<OnnxModel>(m, "OnnxModel")
      .def("__init__",
           [](OnnxModel* self, const std::string& path) {
             check_no_nul(path, "the path");
             minnow_onnx_model* raw = nullptr;
             call([&] { return minnow_onnx_load(path.c_str(), &raw); });
             new (self) OnnxModel{raw};
           },
           "path"_a)
      .def_prop_ro("inputs",
                   [](const OnnxModel& self) {
                     std::vector<std::string> v;
                     for (int32_t i = 0; i < minnow_onnx_n_inputs(self.handle); ++i) v.push_back(minnow_onnx_input_name(self.handle, i));
                     return v;
                   })
      .def_prop_ro("outputs", [](const OnnxModel& self) {
        std::vector<std::string> v;
        for (int32_t i = 0; i < minnow_onnx_n_outputs(self.handle); ++i) v.push_back(minnow_onnx_output_name(self.handle, i));
        return v;
      });

  nb::class_<OnnxSession>(m, "OnnxSession")
      .def("__init__",
           [](OnnxSession* self, const OnnxModel& model, int32_t n_threads, bool optimize) {
             minnow_onnx_session_params p = minnow_onnx_session_params_default();
             p.n_threads = n_threads;
             p.optimize = optimize;
             minnow_onnx_session* raw = nullptr;
             call([&] { return minnow_onnx_session_create(model.handle, &p, &raw); });
             new (self) OnnxSession{};
             self->handle = raw;
             for (int32_t i = 0; i < minnow_onnx_n_outputs(model.handle); ++i)
               self->outputs.push_back(minnow_onnx_output_name(model.handle, i));
           },
           "model"_a, "n_threads"_a, "optimize"_a)
      .def("run",
           [](OnnxSession& self, const std::vector<std::pair<std::string, AnyArray>>& inputs) {
             // The lock is taken without the GIL: a thread waiting for it must not hold the
             // GIL that the thread inside needs back after each C call.
             std::unique_lock<std::mutex> lock(self.busy, std::defer_lock);
             {
               nb::gil_scoped_release nogil;
               lock.lock();
             }
             if (!self.handle) raise(MINNOW_ERR_INVALID_ARGUMENT, "the session is closed");
             for (const auto& [name, a] : inputs) {
               check_no_nul(name, "an input name");
               const int32_t dtype = onnx_dtype_of(a.dtype());
               if (dtype == 0) raise(MINNOW_ERR_INVALID_ARGUMENT, "input '" + name + "': unsupported element type");
               std::vector<int64_t> shape(a.ndim());
               for (size_t d = 0; d < a.ndim(); ++d) shape[d] = static_cast<int64_t>(a.shape(d));
               call([&] {
                 return minnow_onnx_set_input(self.handle, name.c_str(), dtype, shape.data(),
                                              static_cast<int32_t>(shape.size()), a.data());
               });
             }
             call([&] { return minnow_onnx_run(self.handle); });
             nb::dict result;
             for (const std::string& name : self.outputs) {
               minnow_onnx_tensor t;
               check(outcome(minnow_onnx_get_output(self.handle, name.c_str(), &t)));
               const size_t bytes = static_cast<size_t>(t.n_elements) * onnx_dtype_bytes(t.dtype);
               char* buf = new char[bytes > 0 ? bytes : 1];
               nb::capsule owner(buf, [](void* p) noexcept { delete[] static_cast<char*>(p); });
               std::memcpy(buf, t.data, bytes);
               std::vector<size_t> shape(t.shape, t.shape + t.rank);
               result[nb::str(name.c_str())] =
                   nb::ndarray<nb::numpy>(buf, shape.size(), shape.data(), owner, nullptr, dlpack_of(t.dtype)).cast();
             }
             return result;
           },
           "inputs"_a)
      .def("close", [](OnnxSession& self) {
        nb::gil_scoped_release nogil;
        std::lock_guard<std::mutex> lock(self.busy);
        minnow_onnx_session_free(self.handle);
        self.handle = nullptr;
      })
      .def_prop_ro("closed", [](const OnnxSession& self) { return self.handle == nullptr; });

  nb::class_<Model>(m, "Model")
      .def("__init__",
           [](Model* self, const std::string& path, int32_t n_threads, int32_t n_ctx, int kv_type, bool int8,
              int32_t backend, int32_t device, int32_t gpu_layers) {
             check_no_nul(path, "the path");
             minnow_model_params p = minnow_model_params_default();
             p.n_threads = n_threads;
             p.n_ctx = n_ctx;
             p.kv_type = kv_type;
             p.int8_activations = int8;
             p.backend = backend;
             p.device = device;
             p.gpu_layers = gpu_layers;
             minnow_model* raw = nullptr;
             call([&] { return minnow_model_load(path.c_str(), &p, &raw); });
             new (self) Model{ModelRef(raw, minnow_model_free)};
           },
           "path"_a, "n_threads"_a, "n_ctx"_a, "kv_type"_a, "int8_activations"_a, "backend"_a, "device"_a, "gpu_layers"_a)
      .def("info", [](const Model& self) { return info_dict(self.hold()); })
      .def("tokenize",
           [](const Model& self, const std::string& text, bool parse_special) {
             ModelRef mod = self.hold();
             return sized<int32_t>(text.size() + 8, [&](int32_t* buf, size_t cap, size_t* n) {
               return minnow_tokenize(mod.get(), text.data(), text.size(), parse_special, buf, cap, n);
             });
           },
           "text"_a, "parse_special"_a)
      .def("detokenize",
           [](const Model& self, const std::vector<int32_t>& ids, bool render_special) {
             ModelRef mod = self.hold();
             std::vector<char> text = sized<char>(ids.size() * 8 + 16, [&](char* buf, size_t cap, size_t* n) {
               return minnow_detokenize(mod.get(), ids.data(), ids.size(), render_special, buf, cap, n);
             });
             return decode(text.data(), text.size());
           },
           "ids"_a, "render_special"_a)
      .def("is_end_of_generation",
           [](const Model& self, int32_t token) { return minnow_token_is_end_of_generation(self.hold().get(), token); },
           "token"_a)
      .def("chat_apply_json",
           [](const Model& self, const std::string& variables) {
             check_no_nul(variables, "the template variables");
             ModelRef mod = self.hold();
             std::vector<char> text = sized<char>(variables.size() + 1024, [&](char* buf, size_t cap, size_t* n) {
               return minnow_chat_apply_json(mod.get(), variables.c_str(), buf, cap, n);
             });
             return decode(text.data(), text.size());
           },
           "variables_json"_a)
      .def("close", [](Model& self) { self.ref.reset(); })
      .def_prop_ro("closed", [](const Model& self) { return !self.ref; });

  nb::class_<Session>(m, "Session")
      .def("__init__",
           [](Session* self, const Model& model, int32_t n_threads, int32_t n_ctx, int32_t n_batch) {
             ModelRef mod = model.hold();
             minnow_session_params p = minnow_session_params_default();
             p.n_threads = n_threads;
             p.n_ctx = n_ctx;
             p.n_batch = n_batch;
             minnow_session* raw = nullptr;
             call([&] { return minnow_session_create(mod.get(), &p, &raw); });
             new (self) Session();
             self->model = mod;
             self->handle = raw;
             self->vocab = static_cast<size_t>(nb::cast<int32_t>(info_dict(mod)["vocab_size"]));
           },
           "model"_a, "n_threads"_a, "n_ctx"_a, "n_batch"_a)
      .def_prop_ro("n_past", [](const Session& self) { return minnow_session_n_past(self.handle.load()); })
      .def_prop_ro("n_ctx", [](const Session& self) { return minnow_session_n_ctx(self.handle.load()); })
      .def_prop_ro("closed", [](const Session& self) { return self.handle.load() == nullptr; })
      .def("reset", [](Session& self) { check(self.run([](minnow_session* s) { return minnow_session_reset(s); })); })
      .def("eval", &eval, "tokens"_a)
      .def("eval_all", &eval_all, "tokens"_a)
      .def("generate", &generate, "prompt"_a, "params"_a, "stop"_a, "callback"_a.none())
      .def(
          "set_draft",
          [](Session& self, const Model* draft, int32_t draft_max, float draft_p_min) {
            ModelRef d = draft != nullptr ? draft->hold() : nullptr;
            check(self.run([&](minnow_session* s) { return minnow_session_set_draft(s, d.get(), draft_max, draft_p_min); }));
          },
          "draft"_a.none(), "draft_max"_a, "draft_p_min"_a)
      // Any thread; the generation stops after its current token.
      .def("cancel", [](Session& self) {
        if (minnow_session* s = self.handle.load()) minnow_session_cancel(s);
      })
      .def("close", [](Session& self) {
        if (t_running == &self) raise(MINNOW_ERR_INVALID_ARGUMENT, "a session cannot be closed from its own token callback");
        if (minnow_session* s = self.handle.load()) minnow_session_cancel(s);
        {
          nb::gil_scoped_release nogil;
          std::lock_guard<std::mutex> lock(self.busy);
          minnow_session_free(self.handle.exchange(nullptr));
        }
        self.model.reset();
      });
}
