// Reads tokenizer.ggml.* metadata into the matching tokenizer model: "gpt2" is byte-level
// BPE, "llama" is SentencePiece BPE with byte fallback (merges derived from the scores).
#include "base/error.hpp"
#include "formats/gguf.hpp"
#include "tokenizer/bpe.hpp"
#include "tokenizer/sentencepiece_merges.hpp"

namespace minnow {
namespace {

[[noreturn]] void fail(const std::string& msg) { throw Error("tokenizer: " + msg); }

const char* const kSpace = "\xe2\x96\x81";  // U+2581, SentencePiece's visible space

int32_t optional_id(const GgufFile& f, const char* key) {
  auto v = f.get_int(key);
  if (!v) return -1;
  if (*v < 0 || *v > INT32_MAX) fail(std::string("metadata '") + key + "' is out of range");
  return static_cast<int32_t>(*v);
}

void read_tokens(const GgufFile& f, BpeVocab& v) {
  const auto* tokens = f.get_array("tokenizer.ggml.tokens", GgufType::STRING);
  if (!tokens) fail("missing metadata 'tokenizer.ggml.tokens'");
  v.tokens.reserve(tokens->count);
  for (std::string_view t : tokens->strings()) v.tokens.emplace_back(t);
  if (const auto* types = f.get_array("tokenizer.ggml.token_type", GgufType::I32)) {
    if (types->count != tokens->count)
      fail("token_type has " + std::to_string(types->count) + " entries for " + std::to_string(tokens->count) + " tokens");
    v.types.reserve(types->count);
    for (int64_t t : types->ints()) {
      if (t < 1 || t > 6) fail("token type " + std::to_string(t) + " is not a GGUF token type");
      v.types.push_back(static_cast<TokenType>(t));
    }
  } else {
    v.types.assign(v.tokens.size(), TokenType::Normal);
  }
}

// Control and unknown tokens are special; user-defined ones are matched in any text.
void collect_added(BpeVocab& v) {
  for (size_t i = 0; i < v.tokens.size(); ++i) {
    TokenType t = v.types[i];
    if (t != TokenType::Control && t != TokenType::Unknown && t != TokenType::UserDefined) continue;
    AddedToken a;
    a.id = static_cast<int32_t>(i);
    a.content = v.tokens[i];
    a.special = t != TokenType::UserDefined;
    v.added.push_back(std::move(a));
  }
}

void read_byte_level(const GgufFile& f, BpeVocab& v) {
  if (const auto* merges = f.get_array("tokenizer.ggml.merges", GgufType::STRING)) {
    v.merges.reserve(merges->count);
    for (std::string_view m : merges->strings()) {
      size_t sp = m.find(' ', 1);
      if (sp == std::string_view::npos) fail("merge '" + std::string(m) + "' is not two tokens separated by a space");
      v.merges.push_back(m.substr(0, sp), m.substr(sp + 1));
    }
  }
  v.pre_splits = PreTokenizer::preset(f.get_string("tokenizer.ggml.pre").value_or("gpt2"));
}

void read_sentencepiece(const GgufFile& f, BpeVocab& v) {
  const auto* scores = f.get_array("tokenizer.ggml.scores", GgufType::F32);
  if (!scores) fail("missing metadata 'tokenizer.ggml.scores' (a SentencePiece tokenizer needs them)");
  if (scores->count != v.tokens.size())
    fail("tokenizer.ggml.scores has " + std::to_string(scores->count) + " entries for " + std::to_string(v.tokens.size()) + " tokens");
  std::vector<float> s;
  s.reserve(scores->count);
  for (double x : scores->floats()) s.push_back(static_cast<float>(x));
  // GGUF converters write user-defined pieces with plain spaces; the model's pieces (and
  // its tokenizer.json) spell them with U+2581.
  for (size_t i = 0; i < v.tokens.size(); ++i)
    if (v.types[i] == TokenType::UserDefined) v.tokens[i] = replace_all(v.tokens[i], " ", kSpace);
  v.merges = merges_from_scores(v.tokens, s, v.types);
  v.symbols = BpeVocab::Symbols::Chars;
  v.byte_fallback = true;
  v.fuse_unk = true;
  v.unk_id = optional_id(f, "tokenizer.ggml.unknown_token_id");
  for (size_t i = 0; i < v.types.size() && v.unk_id < 0; ++i)
    if (v.types[i] == TokenType::Unknown) v.unk_id = static_cast<int32_t>(i);
  const bool space_prefix = f.get_bool("tokenizer.ggml.add_space_prefix").value_or(true);
  if (space_prefix) v.normalizer.prepend = kSpace;
  v.normalizer.replace = {{" ", kSpace}};
  v.decode_replace = {{kSpace, " "}};
  v.strip_leading_spaces = space_prefix ? 1 : 0;
}

}  // namespace

std::unique_ptr<Tokenizer> tokenizer_from_gguf(const GgufFile& f) {
  auto model = f.get_string("tokenizer.ggml.model");
  if (!model) fail("missing metadata 'tokenizer.ggml.model'");
  BpeVocab v;
  read_tokens(f, v);
  if (*model == "gpt2") read_byte_level(f, v);
  else if (*model == "llama") read_sentencepiece(f, v);
  else fail("tokenizer model '" + std::string(*model) + "' is not supported (supported: gpt2, llama)");
  collect_added(v);
  v.bos_id = optional_id(f, "tokenizer.ggml.bos_token_id");
  v.eos_id = optional_id(f, "tokenizer.ggml.eos_token_id");
  v.eot_id = optional_id(f, "tokenizer.ggml.eot_token_id");
  // llama.cpp's defaults when the key is absent: SentencePiece models add BOS.
  v.add_bos = f.get_bool("tokenizer.ggml.add_bos_token").value_or(*model == "llama");
  v.add_eos = f.get_bool("tokenizer.ggml.add_eos_token").value_or(false);
  return std::make_unique<BpeTokenizer>(std::move(v));
}

}  // namespace minnow
