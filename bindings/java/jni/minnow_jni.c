/* JNI glue for org.minnow.Native (bindings/java/src/main/java/org/minnow/Native.java)
 * over minnow's C API. Text crosses as UTF-8 byte[] both ways: JNI's NewStringUTF and
 * GetStringUTFChars speak modified UTF-8, which breaks 4-byte characters (emoji) and NUL.
 * Every entry point returns with either a result or a pending Java exception; local
 * references made in loops are deleted, the few global ones live as long as the library. */
#include <jni.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "minnow/minnow.h"
#ifdef MINNOW_JNI_GENERATED_HEADER
#include "org_minnow_Native.h" /* from javac -h: makes the compiler check these signatures */
#endif

#define MODEL(h) ((minnow_model*)(intptr_t)(h))
#define SESSION(h) ((minnow_session*)(intptr_t)(h))

static JavaVM* g_vm;
static jclass g_exception_class;   /* org.minnow.MinnowException, global ref */
static jmethodID g_exception_init; /* MinnowException(int, byte[], byte[]) */
static jmethodID g_sink_piece;     /* boolean PieceSink.piece(byte[], int) */

JNIEXPORT jint JNICALL JNI_OnLoad(JavaVM* vm, void* reserved) {
  (void)reserved;
  JNIEnv* env = NULL;
  if ((*vm)->GetEnv(vm, (void**)&env, JNI_VERSION_1_6) != JNI_OK) return JNI_ERR;
  jclass ex = (*env)->FindClass(env, "org/minnow/MinnowException");
  if (!ex) return JNI_ERR;
  g_exception_init = (*env)->GetMethodID(env, ex, "<init>", "(I[B[B)V");
  g_exception_class = (jclass)(*env)->NewGlobalRef(env, ex);
  (*env)->DeleteLocalRef(env, ex);
  jclass sink = (*env)->FindClass(env, "org/minnow/PieceSink");
  if (!sink) return JNI_ERR;
  g_sink_piece = (*env)->GetMethodID(env, sink, "piece", "([BI)Z");
  (*env)->DeleteLocalRef(env, sink);
  if (!g_exception_init || !g_exception_class || !g_sink_piece) return JNI_ERR;
  g_vm = vm;
  return JNI_VERSION_1_6;
}

JNIEXPORT void JNICALL JNI_OnUnload(JavaVM* vm, void* reserved) {
  (void)reserved;
  JNIEnv* env = NULL;
  if ((*vm)->GetEnv(vm, (void**)&env, JNI_VERSION_1_6) == JNI_OK && g_exception_class)
    (*env)->DeleteGlobalRef(env, g_exception_class);
  g_exception_class = NULL;
}

/* ---- Helpers: each returns NULL/false with a Java exception pending on failure ---- */

static void throw_new(JNIEnv* env, const char* class_name, const char* message) {
  jclass c = (*env)->FindClass(env, class_name);
  if (c) {
    (*env)->ThrowNew(env, c, message);
    (*env)->DeleteLocalRef(env, c);
  }
}

static void throw_oom(JNIEnv* env) { throw_new(env, "java/lang/OutOfMemoryError", "minnow_jni: out of memory"); }

static jbyteArray to_bytes(JNIEnv* env, const char* data, size_t n) {
  if (n > INT32_MAX) {
    throw_oom(env);
    return NULL;
  }
  jbyteArray a = (*env)->NewByteArray(env, (jsize)n);
  if (a && n) (*env)->SetByteArrayRegion(env, a, 0, (jsize)n, (const jbyte*)data);
  return a;
}

/* Turns a failed status into MinnowException with minnow_last_error() (this thread's). */
static bool ok(JNIEnv* env, minnow_status st) {
  if (st == MINNOW_OK) return true;
  const char* msg = minnow_last_error();
  const char* name = minnow_status_name(st);
  if (!msg) msg = "";
  if (!name) name = "MINNOW_ERR_UNKNOWN";
  jbyteArray jname = to_bytes(env, name, strlen(name));
  jbyteArray jmsg = jname ? to_bytes(env, msg, strlen(msg)) : NULL;
  if (jmsg) {
    jthrowable ex = (jthrowable)(*env)->NewObject(env, g_exception_class, g_exception_init, (jint)st, jname, jmsg);
    if (ex) {
      (*env)->Throw(env, ex);
      (*env)->DeleteLocalRef(env, ex);
    }
  }
  if (jname) (*env)->DeleteLocalRef(env, jname);
  if (jmsg) (*env)->DeleteLocalRef(env, jmsg);
  return false;
}

static bool not_null(JNIEnv* env, const void* p, const char* what) {
  if (p) return true;
  throw_new(env, "java/lang/NullPointerException", what);
  return false;
}

static bool min_length(JNIEnv* env, jarray a, jsize n, const char* what) {
  if (!not_null(env, a, what)) return false;
  if ((*env)->GetArrayLength(env, a) >= n) return true;
  throw_new(env, "java/lang/IllegalArgumentException", what);
  return false;
}

/* A malloc'd NUL-terminated copy of a byte[]; *len (if given) gets its length. */
static char* copy_bytes(JNIEnv* env, jbyteArray a, size_t* len) {
  if (!not_null(env, a, "byte[] is null")) return NULL;
  jsize n = (*env)->GetArrayLength(env, a);
  char* s = malloc((size_t)n + 1);
  if (!s) {
    throw_oom(env);
    return NULL;
  }
  (*env)->GetByteArrayRegion(env, a, 0, n, (jbyte*)s);
  s[n] = '\0';
  if (len) *len = (size_t)n;
  return s;
}

/* A malloc'd copy of an int[] (jint is 32 bits on every JNI platform). */
static int32_t* copy_ints(JNIEnv* env, jintArray a, size_t* len) {
  if (!not_null(env, a, "int[] is null")) return NULL;
  jsize n = (*env)->GetArrayLength(env, a);
  int32_t* p = malloc(n > 0 ? (size_t)n * sizeof(int32_t) : 1);
  if (!p) {
    throw_oom(env);
    return NULL;
  }
  (*env)->GetIntArrayRegion(env, a, 0, n, (jint*)p);
  *len = (size_t)n;
  return p;
}

/* byte[][] -> array of NUL-terminated strings; free with free_strings(). */
static char** copy_string_array(JNIEnv* env, jobjectArray a, size_t* len) {
  if (!not_null(env, a, "byte[][] is null")) return NULL;
  jsize n = (*env)->GetArrayLength(env, a);
  char** out = calloc(n > 0 ? (size_t)n : 1, sizeof(char*));
  if (!out) {
    throw_oom(env);
    return NULL;
  }
  *len = (size_t)n;
  for (jsize i = 0; i < n; ++i) {
    jbyteArray e = (jbyteArray)(*env)->GetObjectArrayElement(env, a, i);
    out[i] = e ? copy_bytes(env, e, NULL) : NULL;
    if (e) (*env)->DeleteLocalRef(env, e);
    if (!out[i]) {
      if (!(*env)->ExceptionCheck(env)) throw_new(env, "java/lang/NullPointerException", "string is null");
      for (jsize j = 0; j < i; ++j) free(out[j]);
      free(out);
      return NULL;
    }
  }
  return out;
}

static void free_strings(char** s, size_t n) {
  if (!s) return;
  for (size_t i = 0; i < n; ++i) free(s[i]);
  free(s);
}

/* Runs a C API call that writes text into a caller buffer, growing the buffer when it
 * answers MINNOW_ERR_BUFFER_TOO_SMALL, and returns the text as byte[]. */
typedef minnow_status (*text_call)(const void* args, char* buf, size_t capacity, size_t* n_out);

static jbyteArray sized_text(JNIEnv* env, text_call call, const void* args, size_t guess) {
  size_t cap = guess;
  for (int attempt = 0; attempt < 4; ++attempt) {
    char* buf = malloc(cap + 1);
    if (!buf) {
      throw_oom(env);
      return NULL;
    }
    size_t n = 0;
    minnow_status st = call(args, buf, cap + 1, &n);
    if (st == MINNOW_OK && n <= cap + 1) {
      jbyteArray r = to_bytes(env, buf, n);
      free(buf);
      return r;
    }
    free(buf);
    if (st != MINNOW_ERR_BUFFER_TOO_SMALL) {
      ok(env, st == MINNOW_OK ? MINNOW_ERR_INTERNAL : st);
      return NULL;
    }
    if (n <= cap || n > INT32_MAX) break; /* an answer that cannot be met */
    cap = n;
  }
  throw_new(env, "java/lang/IllegalStateException", "minnow_jni: the text size kept changing");
  return NULL;
}

/* ---- Library ----------------------------------------------------------------------- */

JNIEXPORT jint JNICALL Java_org_minnow_Native_abiVersion(JNIEnv* env, jclass cls) {
  (void)env, (void)cls;
  return minnow_abi_version();
}

JNIEXPORT jbyteArray JNICALL Java_org_minnow_Native_version(JNIEnv* env, jclass cls) {
  (void)cls;
  const char* v = minnow_version();
  return to_bytes(env, v ? v : "", v ? strlen(v) : 0);
}

/* ---- Models ------------------------------------------------------------------------ */

JNIEXPORT void JNICALL Java_org_minnow_Native_modelParamsDefault(JNIEnv* env, jclass cls, jintArray out) {
  (void)cls;
  if (!min_length(env, out, 7, "modelParamsDefault: int[7] needed")) return;
  minnow_model_params p = minnow_model_params_default();
  jint v[7] = {p.n_threads, p.n_ctx, (jint)p.kv_type, p.int8_activations ? 1 : 0, p.backend, p.device, p.gpu_layers};
  (*env)->SetIntArrayRegion(env, out, 0, 7, v);
}

JNIEXPORT jlong JNICALL Java_org_minnow_Native_modelLoad(JNIEnv* env, jclass cls, jbyteArray path, jint n_threads,
                                                         jint n_ctx, jint kv_type, jboolean int8_activations,
                                                         jint backend, jint device, jint gpu_layers) {
  (void)cls;
  char* p = copy_bytes(env, path, NULL);
  if (!p) return 0;
  minnow_model_params params = minnow_model_params_default();
  params.n_threads = n_threads;
  params.n_ctx = n_ctx;
  params.kv_type = kv_type;
  params.int8_activations = int8_activations == JNI_TRUE;
  params.backend = backend;
  params.device = device;
  params.gpu_layers = gpu_layers;
  minnow_model* model = NULL;
  minnow_status st = minnow_model_load(p, &params, &model);
  free(p);
  if (!ok(env, st)) return 0;
  return (jlong)(intptr_t)model;
}

JNIEXPORT void JNICALL Java_org_minnow_Native_modelFree(JNIEnv* env, jclass cls, jlong model) {
  (void)env, (void)cls;
  minnow_model_free(MODEL(model));
}

static bool set_string(JNIEnv* env, jobjectArray a, jsize i, const char* s) {
  if (!s) s = "";
  jbyteArray b = to_bytes(env, s, strlen(s));
  if (!b) return false;
  (*env)->SetObjectArrayElement(env, a, i, b);
  (*env)->DeleteLocalRef(env, b);
  return !(*env)->ExceptionCheck(env);
}

JNIEXPORT void JNICALL Java_org_minnow_Native_modelInfo(JNIEnv* env, jclass cls, jlong model, jlongArray nums,
                                                        jobjectArray strings) {
  (void)cls;
  if (!min_length(env, nums, 12, "modelInfo: long[12] needed") ||
      !min_length(env, strings, 2, "modelInfo: byte[2][] needed"))
    return;
  minnow_model_info info;
  memset(&info, 0, sizeof info);
  if (!ok(env, minnow_model_get_info(MODEL(model), &info))) return;
  jlong v[12] = {info.n_layers,  info.d_model,        info.n_heads,        info.n_kv_heads,
                 info.d_ff,      info.vocab_size,     info.context_length, (jlong)info.n_params,
                 (jlong)info.weight_bytes, info.bos_id, info.eos_id,        info.has_chat_template ? 1 : 0};
  (*env)->SetLongArrayRegion(env, nums, 0, 12, v);
  if (set_string(env, strings, 0, info.architecture)) set_string(env, strings, 1, info.name);
}

/* ---- Tokens and text ------------------------------------------------------------------ */

JNIEXPORT jintArray JNICALL Java_org_minnow_Native_tokenize(JNIEnv* env, jclass cls, jlong model, jbyteArray text,
                                                            jboolean parse_special) {
  (void)cls;
  size_t len = 0;
  char* t = copy_bytes(env, text, &len);
  if (!t) return NULL;
  /* Rarely more tokens than bytes (BOS, special tokens): one call in the common case. */
  size_t cap = len + 16, n = 0;
  int32_t* ids = NULL;
  minnow_status st = MINNOW_ERR_BUFFER_TOO_SMALL;
  for (int attempt = 0; attempt < 3 && st == MINNOW_ERR_BUFFER_TOO_SMALL; ++attempt) {
    free(ids);
    ids = malloc(cap * sizeof(int32_t));
    if (!ids) {
      free(t);
      throw_oom(env);
      return NULL;
    }
    st = minnow_tokenize(MODEL(model), t, len, parse_special == JNI_TRUE, ids, cap, &n);
    if (st == MINNOW_ERR_BUFFER_TOO_SMALL) {
      if (n <= cap || n > INT32_MAX) st = MINNOW_ERR_INTERNAL;
      cap = n;
    }
  }
  free(t);
  jintArray r = NULL;
  if (ok(env, st)) {
    r = (*env)->NewIntArray(env, (jsize)n);
    if (r && n) (*env)->SetIntArrayRegion(env, r, 0, (jsize)n, (const jint*)ids);
  }
  free(ids);
  return r;
}

struct detokenize_args {
  const minnow_model* model;
  const int32_t* tokens;
  size_t n;
  bool render_special;
};

static minnow_status detokenize_call(const void* a, char* buf, size_t cap, size_t* n) {
  const struct detokenize_args* d = a;
  return minnow_detokenize(d->model, d->tokens, d->n, d->render_special, buf, cap, n);
}

JNIEXPORT jbyteArray JNICALL Java_org_minnow_Native_detokenize(JNIEnv* env, jclass cls, jlong model,
                                                               jintArray tokens, jboolean render_special) {
  (void)cls;
  struct detokenize_args d = {MODEL(model), NULL, 0, render_special == JNI_TRUE};
  int32_t* ids = copy_ints(env, tokens, &d.n);
  if (!ids) return NULL;
  d.tokens = ids;
  jbyteArray r = sized_text(env, detokenize_call, &d, d.n * 8 + 64);
  free(ids);
  return r;
}

JNIEXPORT jboolean JNICALL Java_org_minnow_Native_isEndOfGeneration(JNIEnv* env, jclass cls, jlong model,
                                                                    jint token) {
  (void)env, (void)cls;
  return minnow_token_is_end_of_generation(MODEL(model), token) ? JNI_TRUE : JNI_FALSE;
}

/* ---- Chat templates ------------------------------------------------------------------- */

struct chat_args {
  const minnow_model* model;
  const minnow_chat_message* messages;
  size_t n;
  bool add_generation_prompt;
};

static minnow_status chat_call(const void* a, char* buf, size_t cap, size_t* n) {
  const struct chat_args* c = a;
  return minnow_chat_apply(c->model, c->messages, c->n, c->add_generation_prompt, buf, cap, n);
}

JNIEXPORT jbyteArray JNICALL Java_org_minnow_Native_chatApply(JNIEnv* env, jclass cls, jlong model, jobjectArray roles,
                                                              jobjectArray contents, jboolean add_generation_prompt) {
  (void)cls;
  size_t n_roles = 0, n_contents = 0;
  char** r = copy_string_array(env, roles, &n_roles);
  char** c = r ? copy_string_array(env, contents, &n_contents) : NULL;
  minnow_chat_message* messages = c ? calloc(n_roles ? n_roles : 1, sizeof(minnow_chat_message)) : NULL;
  jbyteArray out = NULL;
  if (c && !messages) throw_oom(env);
  if (messages && n_roles != n_contents)
    throw_new(env, "java/lang/IllegalArgumentException", "chatApply: as many roles as contents needed");
  if (messages && n_roles == n_contents) {
    size_t guess = 1024;
    for (size_t i = 0; i < n_roles; ++i) {
      messages[i].role = r[i];
      messages[i].content = c[i];
      guess += strlen(r[i]) + strlen(c[i]) + 64;
    }
    struct chat_args args = {MODEL(model), messages, n_roles, add_generation_prompt == JNI_TRUE};
    out = sized_text(env, chat_call, &args, guess);
  }
  free(messages);
  free_strings(c, n_contents);
  free_strings(r, n_roles);
  return out;
}

struct chat_json_args {
  const minnow_model* model;
  const char* json;
};

static minnow_status chat_json_call(const void* a, char* buf, size_t cap, size_t* n) {
  const struct chat_json_args* c = a;
  return minnow_chat_apply_json(c->model, c->json, buf, cap, n);
}

JNIEXPORT jbyteArray JNICALL Java_org_minnow_Native_chatApplyJson(JNIEnv* env, jclass cls, jlong model,
                                                                  jbyteArray json) {
  (void)cls;
  size_t len = 0;
  char* j = copy_bytes(env, json, &len);
  if (!j) return NULL;
  struct chat_json_args args = {MODEL(model), j};
  jbyteArray out = sized_text(env, chat_json_call, &args, len + 1024);
  free(j);
  return out;
}

/* ---- Sessions ---------------------------------------------------------------------- */

JNIEXPORT jlong JNICALL Java_org_minnow_Native_sessionCreate(JNIEnv* env, jclass cls, jlong model, jint n_threads,
                                                             jint n_ctx, jint n_batch) {
  (void)cls;
  minnow_session_params p = minnow_session_params_default();
  p.n_threads = n_threads;
  p.n_ctx = n_ctx;
  p.n_batch = n_batch;
  minnow_session* s = NULL;
  if (!ok(env, minnow_session_create(MODEL(model), &p, &s))) return 0;
  return (jlong)(intptr_t)s;
}

JNIEXPORT void JNICALL Java_org_minnow_Native_sessionSetDraft(JNIEnv* env, jclass cls, jlong session, jlong draft,
                                                               jint draft_max, jfloat draft_p_min) {
  (void)cls;
  ok(env, minnow_session_set_draft(SESSION(session), draft ? MODEL(draft) : NULL, draft_max, draft_p_min));
}

JNIEXPORT void JNICALL Java_org_minnow_Native_sessionFree(JNIEnv* env, jclass cls, jlong session) {
  (void)env, (void)cls;
  minnow_session_free(SESSION(session));
}

JNIEXPORT void JNICALL Java_org_minnow_Native_sessionReset(JNIEnv* env, jclass cls, jlong session) {
  (void)cls;
  ok(env, minnow_session_reset(SESSION(session)));
}

JNIEXPORT jint JNICALL Java_org_minnow_Native_sessionNPast(JNIEnv* env, jclass cls, jlong session) {
  (void)env, (void)cls;
  return minnow_session_n_past(SESSION(session));
}

JNIEXPORT jint JNICALL Java_org_minnow_Native_sessionNCtx(JNIEnv* env, jclass cls, jlong session) {
  (void)env, (void)cls;
  return minnow_session_n_ctx(SESSION(session));
}

JNIEXPORT void JNICALL Java_org_minnow_Native_sessionCancel(JNIEnv* env, jclass cls, jlong session) {
  (void)env, (void)cls;
  minnow_session_cancel(SESSION(session)); /* best effort: nothing to report to the canceller */
}

JNIEXPORT jfloatArray JNICALL Java_org_minnow_Native_sessionEval(JNIEnv* env, jclass cls, jlong session,
                                                                 jintArray tokens, jint vocab_size) {
  (void)cls;
  if (vocab_size <= 0) {
    throw_new(env, "java/lang/IllegalArgumentException", "sessionEval: vocab_size must be positive");
    return NULL;
  }
  size_t n = 0;
  int32_t* ids = copy_ints(env, tokens, &n);
  if (!ids) return NULL;
  float* logits = malloc((size_t)vocab_size * sizeof(float));
  jfloatArray r = NULL;
  if (!logits) throw_oom(env);
  else if (ok(env, minnow_session_eval(SESSION(session), ids, n, logits, (size_t)vocab_size))) {
    r = (*env)->NewFloatArray(env, vocab_size);
    if (r) (*env)->SetFloatArrayRegion(env, r, 0, vocab_size, logits);
  }
  free(logits);
  free(ids);
  return r;
}

/* ---- Generation ---------------------------------------------------------------------- */

JNIEXPORT void JNICALL Java_org_minnow_Native_generateParamsDefault(JNIEnv* env, jclass cls, jfloatArray floats,
                                                                    jlongArray longs) {
  (void)cls;
  if (!min_length(env, floats, 6, "generateParamsDefault: float[6] needed") ||
      !min_length(env, longs, 7, "generateParamsDefault: long[7] needed"))
    return;
  minnow_generate_params p = minnow_generate_params_default();
  jfloat f[6] = {p.temperature, p.top_p, p.min_p, p.repeat_penalty, p.presence_penalty, p.frequency_penalty};
  jlong l[7] = {p.max_tokens, p.top_k, p.repeat_last_n, (jlong)p.seed, p.stop_at_end_of_generation ? 1 : 0,
                p.parse_special ? 1 : 0, p.lookup_draft};
  (*env)->SetFloatArrayRegion(env, floats, 0, 6, f);
  (*env)->SetLongArrayRegion(env, longs, 0, 7, l);
}

struct generate_ctx {
  JNIEnv* env;
  jobject sink;
  bool stopped;      /* the sink said stop, or a Java exception is pending: never call Java again */
  bool wrong_thread; /* a callback came on a thread that is not the caller's */
};

static bool on_piece(const char* piece, size_t len, int32_t token, void* user_data) {
  struct generate_ctx* c = user_data;
  if (c->stopped) return false; /* e.g. the held-back tail after the callback said stop */
  JNIEnv* here = NULL;
  if ((*g_vm)->GetEnv(g_vm, (void**)&here, JNI_VERSION_1_6) != JNI_OK || here != c->env) {
    c->stopped = c->wrong_thread = true;
    return false;
  }
  JNIEnv* env = c->env;
  jbyteArray bytes = to_bytes(env, piece, len);
  if (!bytes) {
    c->stopped = true;
    return false;
  }
  jboolean go = (*env)->CallBooleanMethod(env, c->sink, g_sink_piece, bytes, (jint)token);
  (*env)->DeleteLocalRef(env, bytes);
  if ((*env)->ExceptionCheck(env) || go != JNI_TRUE) c->stopped = true;
  return !c->stopped;
}

JNIEXPORT void JNICALL Java_org_minnow_Native_generate(JNIEnv* env, jclass cls, jlong session, jbyteArray prompt,
                                                       jintArray prompt_tokens, jfloatArray floats, jlongArray longs,
                                                       jobjectArray stops, jobject sink, jdoubleArray result) {
  (void)cls;
  if (!min_length(env, floats, 6, "generate: float[6] needed") || !min_length(env, longs, 7, "generate: long[7] needed") ||
      !min_length(env, result, 6, "generate: double[6] needed") || !not_null(env, sink, "generate: sink is null"))
    return;
  if (!prompt && !prompt_tokens) {
    throw_new(env, "java/lang/NullPointerException", "generate: no prompt");
    return;
  }
  jfloat f[6];
  jlong l[7];
  (*env)->GetFloatArrayRegion(env, floats, 0, 6, f);
  (*env)->GetLongArrayRegion(env, longs, 0, 7, l);
  minnow_generate_params p = minnow_generate_params_default();
  p.temperature = f[0];
  p.top_p = f[1];
  p.min_p = f[2];
  p.repeat_penalty = f[3];
  p.presence_penalty = f[4];
  p.frequency_penalty = f[5];
  p.max_tokens = (int32_t)l[0];
  p.top_k = (int32_t)l[1];
  p.repeat_last_n = (int32_t)l[2];
  p.seed = (uint64_t)l[3];
  p.stop_at_end_of_generation = l[4] != 0;
  p.parse_special = l[5] != 0;
  p.lookup_draft = (int32_t)l[6];

  size_t n_stop = 0, n_tokens = 0;
  char** stop = stops ? copy_string_array(env, stops, &n_stop) : NULL;
  if (stops && !stop) return;
  p.stop = (const char* const*)stop;
  p.n_stop = n_stop;
  char* text = NULL;
  int32_t* ids = NULL;
  if (prompt) text = copy_bytes(env, prompt, NULL);
  else ids = copy_ints(env, prompt_tokens, &n_tokens);
  if (!text && !ids) {
    free_strings(stop, n_stop);
    return;
  }

  struct generate_ctx ctx = {env, sink, false, false};
  minnow_generate_result r;
  memset(&r, 0, sizeof r);
  minnow_status st = text ? minnow_generate(SESSION(session), text, &p, on_piece, &ctx, &r)
                          : minnow_generate_tokens(SESSION(session), ids, n_tokens, &p, on_piece, &ctx, &r);
  free(text);
  free(ids);
  free_strings(stop, n_stop);
  if ((*env)->ExceptionCheck(env)) return; /* from a callback: it wins over the status */
  if (ctx.wrong_thread) {
    throw_new(env, "java/lang/IllegalStateException", "minnow_jni: a token callback came on another thread");
    return;
  }
  if (!ok(env, st)) return;
  jdouble out[6] = {r.n_prompt, r.n_reused, r.n_generated, (jdouble)r.stop_reason, r.prompt_seconds, r.generate_seconds};
  (*env)->SetDoubleArrayRegion(env, result, 0, 6, out);
}

/* ---- Sentence embeddings -------------------------------------------------------------- */

#define EMBEDDER(h) ((minnow_embedder*)(intptr_t)(h))

JNIEXPORT jlong JNICALL Java_org_minnow_Native_embedderLoad(JNIEnv* env, jclass cls, jbyteArray path, jint n_threads,
                                                            jint precision) {
  (void)cls;
  char* p = copy_bytes(env, path, NULL);
  if (!p) return 0;
  minnow_embedder_params params = minnow_embedder_params_default();
  params.n_threads = n_threads;
  params.precision = precision;
  minnow_embedder* e = NULL;
  minnow_status st = minnow_embedder_load(p, &params, &e);
  free(p);
  if (!ok(env, st)) return 0;
  return (jlong)(intptr_t)e;
}

JNIEXPORT void JNICALL Java_org_minnow_Native_embedderFree(JNIEnv* env, jclass cls, jlong embedder) {
  (void)env, (void)cls;
  minnow_embedder_free(EMBEDDER(embedder));
}

JNIEXPORT jint JNICALL Java_org_minnow_Native_embedderDim(JNIEnv* env, jclass cls, jlong embedder) {
  (void)env, (void)cls;
  return minnow_embedder_dim(EMBEDDER(embedder));
}

/* texts (UTF-8, any bytes) -> n * dim floats. */
JNIEXPORT jfloatArray JNICALL Java_org_minnow_Native_embed(JNIEnv* env, jclass cls, jlong embedder,
                                                           jobjectArray texts) {
  (void)cls;
  if (!not_null(env, texts, "texts")) return NULL;
  const jsize n = (*env)->GetArrayLength(env, texts);
  const int32_t dim = minnow_embedder_dim(EMBEDDER(embedder));
  if (dim <= 0) {
    ok(env, minnow_embed(EMBEDDER(embedder), NULL, NULL, 0, NULL, 0, NULL)); /* the handle's error */
    return NULL;
  }
  if ((size_t)n > (size_t)INT32_MAX / (size_t)dim) {
    throw_oom(env);
    return NULL;
  }
  char** strs = calloc((size_t)n + 1, sizeof(char*));
  size_t* lens = calloc((size_t)n + 1, sizeof(size_t));
  float* out = malloc(((size_t)n * (size_t)dim + 1) * sizeof(float));
  jfloatArray r = NULL;
  jsize got = 0;
  if (!strs || !lens || !out) {
    throw_oom(env);
    goto done;
  }
  for (; got < n; ++got) {
    jbyteArray b = (jbyteArray)(*env)->GetObjectArrayElement(env, texts, got);
    if (!not_null(env, b, "a text")) goto done;
    strs[got] = copy_bytes(env, b, &lens[got]);
    (*env)->DeleteLocalRef(env, b);
    if (!strs[got]) goto done;
  }
  if (ok(env, minnow_embed(EMBEDDER(embedder), (const char* const*)strs, lens, (size_t)n, out, (size_t)n * (size_t)dim,
                           NULL))) {
    r = (*env)->NewFloatArray(env, n * dim);
    if (r && n) (*env)->SetFloatArrayRegion(env, r, 0, n * dim, out);
  }
done:
  if (strs) free_strings(strs, (size_t)got);
  free(lens);
  free(out);
  return r;
}
