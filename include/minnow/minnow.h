/* minnow's C API: the stable interface for apps and language bindings (Python, Java/JNI,
 * Swift, Go...). C99; opaque handles; nothing from C++ crosses it, no exception escapes.
 *
 *   minnow_model* model = NULL;
 *   if (minnow_model_load("SmolLM2-135M-Instruct.Q4_1.gguf", NULL, &model) != MINNOW_OK) {
 *     fprintf(stderr, "%s\n", minnow_last_error());
 *     return 1;
 *   }
 *   minnow_session* session = NULL;
 *   minnow_session_create(model, NULL, &session);
 *   minnow_generate_params gp = minnow_generate_params_default();
 *   gp.max_tokens = 64;
 *   minnow_generate(session, "The capital of France is", &gp, print_piece, NULL, NULL);
 *   minnow_session_free(session);
 *   minnow_model_free(model);
 *
 * Conventions
 * - Every function that can fail returns a minnow_status; on failure minnow_last_error()
 *   names the problem in one line (a thread-local string, valid until the thread's next
 *   failing call). Nothing aborts on bad input: NULL pointers, negative sizes, unknown
 *   enum values, handles already freed (detected: every live handle is registered) and
 *   buffers too small all return an error code.
 * - Ownership: what a *_create / *_load function returns is freed with the matching
 *   *_free (NULL is accepted and ignored). Strings a model hands out (minnow_model_info)
 *   live as long as the model.
 * - Variable-size outputs (tokens, text) go into caller buffers: pass the capacity, get
 *   the size needed in *n_out. With a buffer too small the call returns
 *   MINNOW_ERR_BUFFER_TOO_SMALL and still sets *n_out, so call once with capacity 0 to
 *   size the buffer. Text is UTF-8 and is NUL-terminated when there is room (the
 *   terminator is not counted in *n_out).
 * - Threads: a model may be shared by any number of sessions and threads; one session is
 *   used by one thread at a time, except minnow_session_cancel, which any thread may call.
 *   Callbacks run on the thread that called minnow_generate, before it returns.
 * - Struct parameters start from their *_default() function, so fields added in later
 *   versions keep a sensible value; MINNOW_ABI_VERSION changes when a struct layout or a
 *   signature does.
 */
#ifndef MINNOW_MINNOW_H
#define MINNOW_MINNOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#define MINNOW_C_API __declspec(dllexport)
#else
#define MINNOW_C_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define MINNOW_ABI_VERSION 4  /* 4: minnow_generate_params gained grammar and lookup_draft */

/* The ABI version the library was built with (compare with MINNOW_ABI_VERSION) and its
 * release version ("0.1.0"). */
MINNOW_C_API int minnow_abi_version(void);
MINNOW_C_API const char* minnow_version(void);

typedef enum minnow_status {
  MINNOW_OK = 0,
  MINNOW_ERR_INVALID_ARGUMENT = 1, /* NULL, out of range, freed handle */
  MINNOW_ERR_BUFFER_TOO_SMALL = 2, /* *n_out says how much is needed */
  MINNOW_ERR_LOAD = 3,             /* the model file cannot be read or is malformed/unsupported */
  MINNOW_ERR_CONTEXT_FULL = 4,     /* more tokens than the session's context holds */
  MINNOW_ERR_NO_TEMPLATE = 5,      /* the model has no chat template */
  MINNOW_ERR_TEMPLATE = 6,         /* the chat template failed to render, or its JSON variables are invalid */
  MINNOW_ERR_OUT_OF_MEMORY = 7,
  MINNOW_ERR_INTERNAL = 8
} minnow_status;

/* The message of this thread's last failure ("" if none). */
MINNOW_C_API const char* minnow_last_error(void);
/* A short constant name for a status ("MINNOW_ERR_LOAD"; "MINNOW_ERR_UNKNOWN" for a value
 * that is none). Takes an int: any value a caller holds is safe to pass. */
MINNOW_C_API const char* minnow_status_name(int status);

/* ---- Models ------------------------------------------------------------------------ */

typedef struct minnow_model minnow_model;

typedef enum minnow_kv_type {
  MINNOW_KV_F16 = 0, /* default: half the memory of f32 */
  MINNOW_KV_F32 = 1, /* exact */
  MINNOW_KV_Q8_0 = 2 /* about a quarter of f32 */
} minnow_kv_type;

typedef enum minnow_backend {
  MINNOW_BACKEND_CPU = 0,   /* default */
  MINNOW_BACKEND_VULKAN = 1 /* a GPU through Vulkan: the whole model and an f16 KV cache in its memory */
} minnow_backend;

/* Defaults for the sessions of a model (a session may override threads and context). The file is always
 * memory-mapped read-only; weights the kernels repack are copied once at load and the
 * mapped pages they came from are released. */
typedef struct minnow_model_params {
  int32_t n_threads;   /* 0: one per (big) core */
  int32_t n_ctx;       /* KV-cache capacity in tokens; 0: 4096, capped by the model's */
  int32_t kv_type;     /* a minnow_kv_type (an int field: enum sizes vary between compilers) */
  bool int8_activations; /* int8 instead of 15-bit activations in quantized matmuls: faster, logits move ~0.05 */
  int32_t backend;     /* a minnow_backend: where sessions run */
  int32_t device;      /* the Vulkan device's index (minnow_vulkan_device_count) */
  int32_t gpu_layers;  /* Vulkan: the last N layers (and the output head) on the device, the rest on the CPU; -1: all */
} minnow_model_params;

MINNOW_C_API minnow_model_params minnow_model_params_default(void);

/* Loads a GGUF file or a Hugging Face checkpoint directory. params may be NULL (defaults). */
MINNOW_C_API minnow_status minnow_model_load(const char* path, const minnow_model_params* params,
                                             minnow_model** out);
MINNOW_C_API void minnow_model_free(minnow_model* model);

typedef struct minnow_model_info {
  const char* architecture; /* "llama", "qwen2", "qwen3", "gemma3" */
  const char* name;         /* general.name, may be "" */
  int32_t n_layers, d_model, n_heads, n_kv_heads, d_ff;
  int32_t vocab_size;
  int32_t context_length; /* trained context */
  uint64_t n_params;      /* elements of all weight tensors */
  uint64_t weight_bytes;  /* their bytes as stored in the file */
  int32_t bos_id, eos_id; /* -1 when the model has none */
  bool has_chat_template;
} minnow_model_info;

MINNOW_C_API minnow_status minnow_model_get_info(const minnow_model* model, minnow_model_info* out);

/* ---- Tokens and text ----------------------------------------------------------------- */

/* Text -> token ids. parse_special: control-token text such as "<|im_start|>" becomes that
 * token. Adds BOS when the model asks for it. text need not be NUL-terminated. */
MINNOW_C_API minnow_status minnow_tokenize(const minnow_model* model, const char* text, size_t text_len,
                                           bool parse_special, int32_t* tokens, size_t capacity, size_t* n_out);
/* Token ids -> text (bytes as the tokenizer decodes them; render_special: control tokens
 * appear as their text). */
MINNOW_C_API minnow_status minnow_detokenize(const minnow_model* model, const int32_t* tokens, size_t n_tokens,
                                             bool render_special, char* text, size_t capacity, size_t* n_out);
/* True for EOS and end-of-turn tokens (false for ids outside the vocabulary). */
MINNOW_C_API bool minnow_token_is_end_of_generation(const minnow_model* model, int32_t token);

/* ---- Chat templates ------------------------------------------------------------------ */

typedef struct minnow_chat_message {
  const char* role; /* "system", "user", "assistant", "tool" */
  const char* content;
} minnow_chat_message;

/* Renders the model's own chat template over messages (a prompt to generate from when
 * add_generation_prompt is true). */
MINNOW_C_API minnow_status minnow_chat_apply(const minnow_model* model, const minnow_chat_message* messages,
                                             size_t n_messages, bool add_generation_prompt, char* text,
                                             size_t capacity, size_t* n_out);
/* The same with every template variable in one JSON object, as an OpenAI request carries
 * them: {"messages": [...], "tools": [...], "add_generation_prompt": true}. */
MINNOW_C_API minnow_status minnow_chat_apply_json(const minnow_model* model, const char* variables_json,
                                                  char* text, size_t capacity, size_t* n_out);

/* A GBNF grammar for the JSON texts a JSON Schema accepts (docs/structured-output.md lists
 * the keywords; another is refused with MINNOW_ERR_INVALID_ARGUMENT naming it). Written
 * like minnow_chat_apply: n_out gets the length; a buffer too small is an error. */
MINNOW_C_API minnow_status minnow_json_schema_to_grammar(const char* schema_json, char* grammar, size_t capacity,
                                                         size_t* n_out);

/* ---- Sessions ---------------------------------------------------------------------- */

typedef struct minnow_session minnow_session;

/* Zero fields take the model's defaults (minnow_model_params); the KV type and the
 * activation rounding are the model's. */
typedef struct minnow_session_params {
  int32_t n_threads;
  int32_t n_ctx;
  int32_t n_batch; /* most prompt tokens per forward pass; 0: 256 on the CPU, 512 on a GPU */
} minnow_session_params;

MINNOW_C_API minnow_session_params minnow_session_params_default(void);

/* A KV cache and scratch for one conversation; allocates everything it will need, so
 * decoding allocates nothing. Keeps the model alive: freeing the model handle first is allowed. */
MINNOW_C_API minnow_status minnow_session_create(minnow_model* model, const minnow_session_params* params,
                                                 minnow_session** out);
MINNOW_C_API void minnow_session_free(minnow_session* session);
/* Forgets the conversation (the next generation starts from an empty cache). */
MINNOW_C_API minnow_status minnow_session_reset(minnow_session* session);
/* Speculative decoding with a draft model: a smaller model with the same vocabulary
 * (Qwen2.5-Coder-0.5B for -1.5B) proposes up to draft_max (1..16) tokens greedily, stopping at
 * a token it gives less than draft_p_min (0..1; 0.5 suits most pairs), and the session's
 * model checks them all in one pass: generation gives the same output, sooner where the draft
 * guesses well (docs/speculative.md). The draft gets a KV cache of its own, of the session's
 * context size and threads, and keeps its model alive. With lookup_draft (generate params)
 * too, prompt lookup proposes first and the draft model where lookup finds nothing. draft
 * NULL: off again. A draft of another vocabulary: MINNOW_ERR_INVALID_ARGUMENT. Not during a
 * generation of this session. */
MINNOW_C_API minnow_status minnow_session_set_draft(minnow_session* session, minnow_model* draft, int32_t draft_max,
                                                    float draft_p_min);
/* Tokens in the cache (-1 for a bad handle) and the context size. */
MINNOW_C_API int32_t minnow_session_n_past(const minnow_session* session);
MINNOW_C_API int32_t minnow_session_n_ctx(const minnow_session* session);

/* Makes the session have seen exactly tokens (the longest prefix already cached is
 * reused) and copies the logits after the last one into logits, which must hold
 * vocab_size floats (minnow_model_info.vocab_size; else MINNOW_ERR_BUFFER_TOO_SMALL). */
MINNOW_C_API minnow_status minnow_session_eval(minnow_session* session, const int32_t* tokens, size_t n_tokens,
                                               float* logits, size_t capacity);
/* Evaluates tokens from position 0 and writes the logits of every position:
 * n_tokens * vocab_size floats, position-major. */
MINNOW_C_API minnow_status minnow_session_eval_all(minnow_session* session, const int32_t* tokens,
                                                   size_t n_tokens, float* logits, size_t capacity);

/* ---- Generation ---------------------------------------------------------------------- */

typedef struct minnow_generate_params {
  int32_t max_tokens;  /* default 256 */
  float temperature;   /* default 0.8; <= 0: greedy */
  int32_t top_k;       /* default 40; <= 0: off */
  float top_p;         /* default 0.95; >= 1: off */
  float min_p;         /* default 0.05; <= 0: off */
  float repeat_penalty;  /* default 1 (off) */
  int32_t repeat_last_n; /* default 64 */
  float presence_penalty, frequency_penalty; /* OpenAI's; default 0 */
  uint64_t seed;       /* same seed + same inputs = same output */
  /* Generation stops before the first of these strings appears in the text; the stop
   * string and what follows are not passed to the callback. */
  const char* const* stop;
  size_t n_stop;
  bool stop_at_end_of_generation; /* default true: stop on EOS / end-of-turn tokens */
  bool parse_special;             /* default true: control-token text in the prompt is a token */
  /* Structured output: a GBNF grammar the text must follow (docs/structured-output.md);
   * NULL: free text. minnow_json_schema_to_grammar makes one from a JSON Schema. */
  const char* grammar;
  /* Speculative decoding by prompt lookup: up to this many proposed tokens checked per
   * pass, the output unchanged (docs/speculative.md); default 0: off. */
  int32_t lookup_draft;
} minnow_generate_params;

MINNOW_C_API minnow_generate_params minnow_generate_params_default(void);

/* Called once per generated token with the new text (whole UTF-8 characters, not
 * NUL-terminated; empty while a partial character or a possible start of a stop string
 * is held back) and the token; once more with token -1 for held-back text released at the
 * end. Return false to stop (MINNOW_STOP_CANCELLED). */
typedef bool (*minnow_token_callback)(const char* piece, size_t len, int32_t token, void* user_data);

typedef enum minnow_stop_reason {
  MINNOW_STOP_END_OF_GENERATION = 0, /* EOS / end-of-turn token */
  MINNOW_STOP_MAX_TOKENS = 1,
  MINNOW_STOP_STRING = 2,            /* one of params.stop */
  MINNOW_STOP_CANCELLED = 3,         /* the callback returned false or minnow_session_cancel */
  MINNOW_STOP_CONTEXT_FULL = 4
} minnow_stop_reason;

typedef struct minnow_generate_result {
  int32_t n_prompt;    /* prompt tokens evaluated (after the reused cached prefix) */
  int32_t n_reused;    /* prompt tokens whose KV was already cached */
  int32_t n_generated;
  minnow_stop_reason stop_reason;
  double prompt_seconds, generate_seconds;
} minnow_generate_result;

/* Tokenizes prompt (text; it continues the session's cached tokens where they match) and
 * generates, streaming to callback (may be NULL). params and result may be NULL. */
MINNOW_C_API minnow_status minnow_generate(minnow_session* session, const char* prompt,
                                           const minnow_generate_params* params, minnow_token_callback callback,
                                           void* user_data, minnow_generate_result* result);
/* The same from token ids. */
MINNOW_C_API minnow_status minnow_generate_tokens(minnow_session* session, const int32_t* prompt,
                                                  size_t n_prompt, const minnow_generate_params* params,
                                                  minnow_token_callback callback, void* user_data,
                                                  minnow_generate_result* result);
/* Asks a running generation to stop after its current token (any thread). A generation
 * that starts afterwards is not affected. */
MINNOW_C_API minnow_status minnow_session_cancel(minnow_session* session);

/* ---- Sentence embeddings --------------------------------------------------------------
 * A BERT-family sentence-transformers directory (all-MiniLM-L6-v2...) turns texts into
 * fixed-size vectors (docs/embeddings.md). One embedder is used by one thread at a time. */

typedef struct minnow_embedder minnow_embedder;

typedef enum minnow_embed_precision {
  MINNOW_EMBED_BF16 = 0, /* default: bf16 products summed in f32; cosine ~0.99999 to f32 */
  MINNOW_EMBED_F32 = 1,  /* exact */
  MINNOW_EMBED_Q8_0 = 2  /* 8-bit weights: coarser (cosine ~0.9998) */
} minnow_embed_precision;

typedef struct minnow_embedder_params {
  int32_t n_threads; /* 0: one per core */
  int32_t precision; /* a minnow_embed_precision */
} minnow_embedder_params;

MINNOW_C_API minnow_embedder_params minnow_embedder_params_default(void);
/* params may be NULL (defaults). */
MINNOW_C_API minnow_status minnow_embedder_load(const char* dir, const minnow_embedder_params* params,
                                                minnow_embedder** out);
MINNOW_C_API void minnow_embedder_free(minnow_embedder* embedder);
/* Floats per embedding (384 for all-MiniLM-L6-v2); 0 for an invalid handle. */
MINNOW_C_API int32_t minnow_embedder_dim(const minnow_embedder* embedder);

/* Embeds n_texts UTF-8 texts (lengths[i] bytes each; lengths NULL: NUL-terminated) into out,
 * n_texts * dim floats, text after text (unit length when the model normalizes). capacity
 * is out's size in floats; n_tokens (may be NULL) receives the tokens encoded. */
MINNOW_C_API minnow_status minnow_embed(minnow_embedder* embedder, const char* const* texts, const size_t* lengths,
                                        size_t n_texts, float* out, size_t capacity, int64_t* n_tokens);

/* ---- ONNX models ------------------------------------------------------------------------
 * minnow's general runtime for ONNX CNNs (docs/onnx.md), as MNN shapes it: a model
 * (interpreter) loaded once, sessions that each hold their own tensors and threads, tensors
 * in and out. The first minnow_onnx_run fixes nothing: inputs may change shape between runs.
 * A model is shared by any number of sessions; one session is used by one thread at a time.
 *
 *   minnow_onnx_model* net = NULL;
 *   minnow_onnx_load("mobilenet.onnx", &net);
 *   minnow_onnx_session* s = NULL;
 *   minnow_onnx_session_create(net, NULL, &s);
 *   int64_t shape[4] = {1, 3, 224, 224};
 *   minnow_onnx_set_input(s, "x", MINNOW_ONNX_FLOAT, shape, 4, pixels);
 *   minnow_onnx_run(s);
 *   minnow_onnx_tensor y;
 *   minnow_onnx_get_output(s, minnow_onnx_output_name(net, 0), &y);   // y.data: y.shape[1] floats
 */

typedef struct minnow_onnx_model minnow_onnx_model;
typedef struct minnow_onnx_session minnow_onnx_session;

/* Element types, numbered as ONNX's TensorProto.DataType. */
typedef enum minnow_onnx_dtype {
  MINNOW_ONNX_FLOAT = 1,
  MINNOW_ONNX_UINT8 = 2,
  MINNOW_ONNX_INT8 = 3,
  MINNOW_ONNX_INT32 = 6,
  MINNOW_ONNX_INT64 = 7,
  MINNOW_ONNX_BOOL = 9,
  MINNOW_ONNX_DOUBLE = 11
} minnow_onnx_dtype;

/* A view of a session's tensor: valid until the session's next run, set_input or free. */
typedef struct minnow_onnx_tensor {
  int32_t dtype;        /* a minnow_onnx_dtype */
  int32_t rank;         /* dimensions used in shape (at most 8) */
  int64_t shape[8];
  int64_t n_elements;
  const void* data;
} minnow_onnx_tensor;

/* Refused with MINNOW_ERR_LOAD in one line: an unreadable or malformed file, or an operator
 * minnow lacks (named with its node). */
MINNOW_C_API minnow_status minnow_onnx_load(const char* path, minnow_onnx_model** out);
MINNOW_C_API void minnow_onnx_free(minnow_onnx_model* model);
/* Inputs and outputs: counts (0 for an invalid handle) and names (NULL out of range;
 * they live as long as the model). */
MINNOW_C_API int32_t minnow_onnx_n_inputs(const minnow_onnx_model* model);
MINNOW_C_API int32_t minnow_onnx_n_outputs(const minnow_onnx_model* model);
MINNOW_C_API const char* minnow_onnx_input_name(const minnow_onnx_model* model, int32_t i);
MINNOW_C_API const char* minnow_onnx_output_name(const minnow_onnx_model* model, int32_t i);

typedef struct minnow_onnx_session_params {
  int32_t n_threads; /* 0: one per core */
  bool optimize;     /* constant folding and Conv fusions (default true) */
} minnow_onnx_session_params;

MINNOW_C_API minnow_onnx_session_params minnow_onnx_session_params_default(void);
/* params may be NULL (defaults). The session keeps the model alive. */
MINNOW_C_API minnow_status minnow_onnx_session_create(const minnow_onnx_model* model,
                                                      const minnow_onnx_session_params* params,
                                                      minnow_onnx_session** out);
MINNOW_C_API void minnow_onnx_session_free(minnow_onnx_session* session);
/* Copies an input: rank dimensions in shape, data holding their product of elements of
 * dtype (the model's type for that input). A refused call leaves the input as it was. */
MINNOW_C_API minnow_status minnow_onnx_set_input(minnow_onnx_session* session, const char* name, int32_t dtype,
                                                 const int64_t* shape, int32_t rank, const void* data);
/* Runs the model on the inputs set (every input must have been set). */
MINNOW_C_API minnow_status minnow_onnx_run(minnow_onnx_session* session);
/* The output `name` of the last run; refused when that run failed. */
MINNOW_C_API minnow_status minnow_onnx_get_output(minnow_onnx_session* session, const char* name,
                                                  minnow_onnx_tensor* out);

#ifdef __cplusplus
}
#endif

#endif /* MINNOW_MINNOW_H */
