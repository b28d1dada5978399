// minnow's C++ API: load a model, open a session, generate with a per-token callback.
//
//   auto model = minnow::Model::load("models/SmolLM2-135M-Instruct.Q4_1.gguf");
//   minnow::Session session(*model, {.ctx = 2048});
//   auto prompt = model->tokenize(model->apply_chat_template({{"user", "Hi!"}}, true));
//   session.generate(prompt, {.max_tokens = 64}, [](std::string_view text, int32_t) {
//     std::cout << text << std::flush;
//     return true;  // false stops generation
//   });
//
// Errors (unreadable or unsupported files, bad arguments, prompts longer than the
// context) are thrown as minnow::Error with a one-line message.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

// Symbols of the C++ API exported from libminnow.so (everything else is hidden).
#ifndef MINNOW_API
#define MINNOW_API __attribute__((visibility("default")))
#endif

namespace minnow {

class Error;  // minnow/error.hpp: derives from std::runtime_error
struct LoadedModel;
class SequenceForward;
class ThreadPool;
namespace grammar {
class TokenTrie;
}

struct ModelInfo {
  std::string architecture, name;
  int n_layers, d_model, n_heads, n_kv_heads, d_ff, vocab_size, context_length;
  uint64_t n_params;      // elements of all weight tensors
  uint64_t weight_bytes;  // bytes of all weight tensors as stored
};

struct ChatMessage {
  std::string role;     // "system", "user", "assistant"
  std::string content;
};

class MINNOW_API Model {
 public:
  static std::unique_ptr<Model> load(const std::string& path);
  ~Model();

  const ModelInfo& info() const { return info_; }
  // parse_special: control-token text such as "<|im_start|>" becomes that token.
  // Adds BOS when the model asks for it, unless the text already starts with it (as a
  // rendered chat template often does).
  std::vector<int32_t> tokenize(std::string_view text, bool parse_special = true) const;
  std::string detokenize(std::span<const int32_t> ids, bool render_special = false) const;
  std::string token_text(int32_t id) const;  // the vocabulary entry, as stored
  bool is_end_of_generation(int32_t id) const;
  int32_t bos_id() const;  // -1: none
  int32_t eos_id() const;
  bool has_chat_template() const;
  // Replaces the model's chat template (e.g. with one that takes tools); checked when rendered.
  void set_chat_template(std::string jinja);
  // Renders the model's own chat template (tokenizer.chat_template).
  std::string apply_chat_template(const std::vector<ChatMessage>& messages, bool add_generation_prompt) const;
  // The same with every template variable as the text of one JSON object, as an
  // OpenAI-style request carries them: {"messages": [...], "tools": [...],
  // "add_generation_prompt": true, "enable_thinking": false}. Messages may hold null
  // content, tool_calls, tool results and reasoning_content; extra keys become
  // variables. bos_token/eos_token are the model's unless given; tools and documents
  // are None and add_generation_prompt false when absent, as in transformers.
  std::string apply_chat_template_json(std::string_view variables_json) const;

  const LoadedModel& impl() const { return *m_; }

 private:
  explicit Model(std::unique_ptr<LoadedModel> m);
  std::unique_ptr<LoadedModel> m_;
  ModelInfo info_;
};

struct SamplingOptions {
  float temperature = 0.8f;     // <= 0: greedy (argmax)
  int top_k = 40;               // <= 0: off
  float top_p = 0.95f;          // >= 1: off
  float min_p = 0.05f;          // <= 0: off
  float repeat_penalty = 1.0f;  // 1: off
  int repeat_last_n = 64;       // how many recent tokens the penalty looks at
  // OpenAI's penalties over the tokens generated so far: a token seen c times loses
  // c * frequency_penalty + (c > 0) * presence_penalty from its logit. 0: off.
  float presence_penalty = 0.0f;
  float frequency_penalty = 0.0f;
  uint64_t seed = 0;            // same seed + same inputs = same output
};

struct SessionOptions {
  int ctx = 4096;      // KV-cache capacity in tokens (capped by the model's trained context)
  int threads = 0;     // 0: one per core
  int batch = 0;       // most prompt tokens per forward pass; 0: 256 on the CPU, 512 on a GPU (more tiles for its cores)
  // Q4_0/Q4_1/Q8_0 matmuls (prompt and decode) with activations rounded to int8 instead
  // of 15 bits: prefill ~1.3-1.5x faster, decode a little, but logits move by ~0.05,
  // enough to change some greedy continuations. Off: results as with int16 activations.
  bool int8_decode = false;
  // KV-cache storage: f16 halves its memory and the bandwidth attention reads (values
  // rounded to 11 significant bits); q8_0 about quarters it (blocks of 32 int8 with a
  // scale; head dimension a multiple of 32); f32 keeps them exact.
  enum class KvType { F32, F16, Q8_0 } kv_type = KvType::F16;
  // Where the forward pass runs: the CPU, or a Vulkan device (`minnow devices` lists them;
  // the whole model and an f16 KV cache go to its memory).
  enum class Backend { Cpu, Vulkan } backend = Backend::Cpu;
  int device = 0;  // the Vulkan device's index
  // With the Vulkan backend: how many of the last layers run on the device (with the
  // output head); the layers before them run on the CPU. -1 (or more than the model has):
  // all of them.
  int gpu_layers = -1;
};

struct GenerateOptions {
  int max_tokens = 256;
  SamplingOptions sampling;
  bool stop_at_end_of_generation = true;  // stop on EOS / end-of-turn tokens
  // Structured output: a GBNF grammar (llama.cpp's notation, root rule `root`) that the
  // generated text must follow; empty: free text. json_schema_to_grammar() makes one.
  // Generation ends when the grammar is complete and the model ends its turn.
  std::string grammar;
  // Speculative decoding by prompt lookup (no second model): after each token, the tokens
  // that followed the latest earlier occurrence of the last few tokens are run through the
  // model in one pass with it, and kept as long as sampling picks exactly them. The output
  // is the same as without (greedy, or sampled with the same seed); repetitive outputs
  // (edits of the prompt, code) come faster. The most tokens proposed at once; 0: off.
  int lookup_draft = 0;
  // Speculative decoding with a draft model: a Session over a smaller model with the same
  // vocabulary (Qwen2.5-Coder-0.5B for -1.5B) proposes up to draft_max tokens greedily,
  // checked as above (same output). nullptr: off. With lookup_draft too, prompt lookup
  // proposes first and the draft model only where lookup finds nothing.
  class Session* draft_model = nullptr;
  int draft_max = 8;
  // The draft model stops proposing at a token it gives less than this probability (each
  // proposal costs a draft pass, and an unlikely one is seldom kept); 0: always draft_max.
  float draft_min_p = 0.5f;
};

// A GBNF grammar for the JSON texts a JSON Schema accepts (the subset in docs/structured-output.md);
// "" or "{}" with json_object: any JSON object. Throws Error naming an unsupported keyword and its path.
MINNOW_API std::string json_schema_to_grammar(std::string_view schema_json);
MINNOW_API std::string json_object_grammar();

struct GenerateResult {
  int n_prompt = 0;         // prompt tokens evaluated (after reusing the cached prefix)
  int n_reused = 0;         // prompt tokens whose KV was already cached
  int n_generated = 0;
  enum class Stop { EndOfGeneration, MaxTokens, Cancelled, ContextFull } stop = Stop::MaxTokens;
  double prompt_seconds = 0, generate_seconds = 0;
  int n_drafted = 0, n_accepted = 0;  // speculative decoding: tokens proposed, and kept
};

// Receives each new piece of text (always whole UTF-8 characters) and the token id;
// return false to stop.
using TokenCallback = std::function<bool(std::string_view text, int32_t id)>;

class MINNOW_API Session {
 public:
  Session(const Model& model, const SessionOptions& options = {});
  ~Session();

  int context_size() const;
  int n_past() const { return static_cast<int>(history_.size()); }
  const std::vector<int32_t>& history() const { return history_; }
  void reset() { history_.clear(); }

  // Makes the model have seen exactly `tokens` (reusing the longest cached prefix) and
  // returns the logits (vocab_size floats) after the last one.
  std::span<const float> eval(std::span<const int32_t> tokens);

  // Evaluates `tokens` from position 0 and calls fn(position, logits) for every position.
  void eval_all(std::span<const int32_t> tokens, const std::function<void(int, std::span<const float>)>& fn);

  // eval(prompt), then samples up to max_tokens, streaming them to on_token.
  GenerateResult generate(std::span<const int32_t> prompt, const GenerateOptions& options,
                          const TokenCallback& on_token);

  // Up to n greedy tokens that follow seq (the cache is brought to seq first, reusing the
  // common prefix), stopping before a token whose probability is below min_p: how a draft
  // model proposes.
  void greedy_continuation(std::span<const int32_t> seq, int n, std::vector<int32_t>& out, float min_p = 0.0f);

  // Asks a running generate() to stop after the current step (thread- and signal-safe).
  void cancel() { cancel_.store(true); }

 private:
  void feed(std::span<const int32_t> tokens, int pos0);

  const Model& model_;
  int ctx_, batch_;
  std::unique_ptr<ThreadPool> pool_;
  std::unique_ptr<SequenceForward> net_;  // the backend's forward pass and KV cache
  std::vector<int32_t> history_;
  std::vector<float> logits_;
  std::atomic<bool> cancel_{false};
  std::shared_ptr<const grammar::TokenTrie> vocab_trie_;  // built at the first grammar
};

}  // namespace minnow
