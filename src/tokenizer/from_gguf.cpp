// Reads tokenizer.ggml.* metadata into the matching tokenizer model.
#include "base/error.hpp"
#include "formats/gguf.hpp"
#include "tokenizer/bpe.hpp"

namespace minnow {
namespace {

[[noreturn]] void fail(const std::string& msg) { throw Error("tokenizer: " + msg); }

int32_t optional_id(const GgufFile& f, const char* key) {
  auto v = f.get_int(key);
  if (!v) return -1;
  if (*v < 0 || *v > INT32_MAX) fail(std::string("metadata '") + key + "' is out of range");
  return static_cast<int32_t>(*v);
}

}  // namespace

std::unique_ptr<Tokenizer> tokenizer_from_gguf(const GgufFile& f) {
  auto model = f.get_string("tokenizer.ggml.model");
  if (!model) fail("missing metadata 'tokenizer.ggml.model'");
  if (*model != "gpt2")
    fail("tokenizer model '" + std::string(*model) + "' is not supported yet (supported: gpt2 byte-level BPE)");
  BpeVocab v;
  const auto* tokens = f.get_array("tokenizer.ggml.tokens", GgufType::STRING);
  if (!tokens) fail("missing metadata 'tokenizer.ggml.tokens'");
  v.tokens.reserve(tokens->size());
  for (const auto& t : *tokens) v.tokens.emplace_back(t.str);
  if (const auto* types = f.get_array("tokenizer.ggml.token_type", GgufType::I32)) {
    v.types.reserve(types->size());
    for (const auto& t : *types) {
      if (t.i < 1 || t.i > 6) fail("token type " + std::to_string(t.i) + " is not a GGUF token type");
      v.types.push_back(static_cast<TokenType>(t.i));
    }
  }
  if (const auto* merges = f.get_array("tokenizer.ggml.merges", GgufType::STRING)) {
    v.merges.reserve(merges->size());
    for (const auto& m : *merges) {
      size_t sp = m.str.find(' ', 1);
      if (sp == std::string_view::npos) fail("merge '" + std::string(m.str) + "' is not two tokens separated by a space");
      v.merges.emplace_back(std::string(m.str.substr(0, sp)), std::string(m.str.substr(sp + 1)));
    }
  }
  v.pre_tokenizer = std::string(f.get_string("tokenizer.ggml.pre").value_or("gpt2"));
  v.bos_id = optional_id(f, "tokenizer.ggml.bos_token_id");
  v.eos_id = optional_id(f, "tokenizer.ggml.eos_token_id");
  v.eot_id = optional_id(f, "tokenizer.ggml.eot_token_id");
  v.add_bos = f.get_bool("tokenizer.ggml.add_bos_token").value_or(false);
  return std::make_unique<BpeTokenizer>(std::move(v));
}

}  // namespace minnow
