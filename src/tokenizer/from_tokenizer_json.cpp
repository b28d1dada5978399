// Reads a Hugging Face tokenizer.json (+ tokenizer_config.json beside it) into the
// byte-level BPE model. Only constructs whose behaviour is implemented are accepted; any
// other normalizer, pre-tokenizer, model option or template is an Error naming it, so a
// tokenizer never loads into something that encodes differently from `tokenizers`.
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "base/error.hpp"
#include "tokenizer/bpe.hpp"
#include "tokenizer/wordpiece.hpp"

namespace minnow {
namespace {

using nlohmann::json;

[[noreturn]] void fail(const std::string& msg) { throw Error("tokenizer: " + msg); }

json read_json(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot open '" + path + "'");
  try {
    return json::parse(in);
  } catch (const json::exception& e) {
    fail("'" + path + "' is not valid JSON: " + e.what());
  }
}

// Nested Sequences recurse; a hostile file must not exhaust the stack.
void check_depth(int depth) {
  if (depth > 16) fail("tokenizer.json nests Sequences more than 16 deep");
}

std::string type_of(const json& j) { return j.is_object() ? j.value("type", std::string("?")) : std::string("?"); }

// Config tokens are either "text" or {"content": "text", ...}.
std::string token_content(const json& j) {
  if (j.is_string()) return j.get<std::string>();
  if (j.is_object() && j.contains("content")) return j.at("content").get<std::string>();
  return {};
}

// Literal text of a {"String": ...} pattern; Regex patterns are refused where only literals work.
std::string string_pattern(const json& pattern, const std::string& where) {
  if (pattern.contains("String")) return pattern.at("String").get<std::string>();
  fail(where + " pattern " + pattern.dump() + " is not supported (supported: String)");
}

void read_normalizer(const json& n, BpeVocab& v, int depth = 0) {
  check_depth(depth);
  if (n.is_null()) return;
  std::string t = type_of(n);
  Normalizer& out = v.normalizer;
  if (t == "Sequence") {
    for (const auto& sub : n.at("normalizers")) read_normalizer(sub, v, depth + 1);
  } else if (t == "NFC") {
    // minnow applies NFC first; after another step it could change what that step sees.
    if (!out.prepend.empty() || !out.replace.empty()) fail("normalizer NFC after Prepend or Replace is not supported");
    out.nfc = true;
  } else if (t == "Prepend") {
    if (!out.replace.empty() || !out.prepend.empty()) fail("normalizer Prepend after Replace or Prepend is not supported");
    out.prepend = n.at("prepend").get<std::string>();
  } else if (t == "Replace") {
    std::string from = string_pattern(n.at("pattern"), "normalizer Replace");
    if (from.empty()) fail("normalizer Replace with an empty pattern is not supported");
    out.replace.emplace_back(from, n.at("content").get<std::string>());
  } else {
    fail("normalizer '" + t + "' is not supported (supported: NFC, Prepend, Replace, Sequence)");
  }
}

// A literal as a PCRE2 pattern.
std::string quote_regex(const std::string& literal) {
  std::string out = "\\Q";
  for (size_t i = 0; i < literal.size(); ++i) {
    if (literal.compare(i, 2, "\\E") == 0) {
      out += "\\E\\\\E\\Q";
      ++i;
    } else {
      out += literal[i];
    }
  }
  return out + "\\E";
}

// Flattens the pre-tokenizer into regex splits; ByteLevel must come last, as it maps bytes
// to the characters the vocabulary is written in.
void read_pre_tokenizer(const json& p, BpeVocab& v, bool& byte_level, int depth = 0) {
  check_depth(depth);
  std::string t = type_of(p);
  if (byte_level) fail("pre-tokenizer '" + t + "' after ByteLevel is not supported");
  if (t == "Sequence") {
    for (const auto& sub : p.at("pretokenizers")) read_pre_tokenizer(sub, v, byte_level, depth + 1);
  } else if (t == "ByteLevel") {
    if (p.value("add_prefix_space", false)) fail("pre-tokenizer ByteLevel with add_prefix_space is not supported");
    if (p.value("use_regex", true))
      for (auto& split : PreTokenizer::preset("gpt2")) v.pre_splits.push_back(split);
    byte_level = true;
  } else if (t == "Split") {
    const json& pat = p.at("pattern");
    const std::string behavior = p.value("behavior", std::string());
    PreSplit split;
    if (behavior == "Isolated") split.behavior = PreSplit::Behavior::Isolated;
    else if (behavior == "MergedWithPrevious") split.behavior = PreSplit::Behavior::MergedWithPrevious;
    else fail("pre-tokenizer Split with behavior '" + behavior + "' is not supported (supported: Isolated, MergedWithPrevious)");
    if (p.value("invert", false)) fail("pre-tokenizer Split with invert is not supported");
    if (pat.contains("Regex")) split.regex = pat.at("Regex").get<std::string>();
    else if (pat.contains("String")) split.regex = quote_regex(pat.at("String").get<std::string>());
    else fail("pre-tokenizer Split pattern must be Regex or String");
    v.pre_splits.push_back(std::move(split));
  } else if (t == "Digits") {
    v.pre_splits.push_back({p.value("individual_digits", false) ? "\\p{N}" : "\\p{N}+", PreSplit::Behavior::Isolated});
  } else {
    fail("pre-tokenizer '" + t + "' is not supported (supported: Sequence, Split, ByteLevel, Digits)");
  }
}

// Post-processors only matter here when they add tokens; the supported templates are
// "$A" with at most one special token before it (BOS, BERT's [CLS]) and one after it (EOS, [SEP]).
template <typename Vocab>
void read_post_processor(const json& p, Vocab& v, int depth = 0) {
  check_depth(depth);
  if (p.is_null()) return;
  std::string t = type_of(p);
  if (t == "Sequence") {
    for (const auto& sub : p.at("processors")) read_post_processor(sub, v, depth + 1);
  } else if (t == "ByteLevel") {
    // Only adjusts offsets.
  } else if (t == "TemplateProcessing") {
    const json& single = p.at("single");
    auto special_id = [&](const json& item) {
      std::string name = item.at("SpecialToken").at("id").get<std::string>();
      const json& ids = p.at("special_tokens").at(name).at("ids");
      if (ids.size() != 1) fail("post-processor special token '" + name + "' must be one id");
      return ids[0].get<int32_t>();
    };
    size_t seq = single.size();
    for (size_t i = 0; i < single.size(); ++i)
      if (single[i].contains("Sequence")) seq = i;
    if (seq == single.size() || seq > 1 || single.size() - seq > 2)
      fail("post-processor TemplateProcessing '" + single.dump() + "' is not supported (supported: [BOS] $A [EOS])");
    if (seq == 1) {
      v.bos_id = special_id(single[0]);
      v.add_bos = true;
    }
    if (single.size() - seq == 2) {
      v.eos_id = special_id(single[seq + 1]);
      v.add_eos = true;
    }
  } else {
    fail("post-processor '" + t + "' is not supported (supported: ByteLevel, TemplateProcessing, Sequence)");
  }
}

// Decoders: ByteLevel for byte-level BPE; Replace, ByteFallback, Fuse and a leading Strip
// for SentencePiece-style BPE.
struct DecoderInfo {
  bool byte_level = false, byte_fallback = false;
};

void read_decoder(const json& d, BpeVocab& v, DecoderInfo& info, int depth = 0) {
  check_depth(depth);
  if (d.is_null()) return;
  std::string t = type_of(d);
  if (t == "Sequence") {
    for (const auto& sub : d.at("decoders")) read_decoder(sub, v, info, depth + 1);
  } else if (t == "ByteLevel") {
    info.byte_level = true;
  } else if (t == "ByteFallback") {
    info.byte_fallback = true;
  } else if (t == "Fuse") {
    // Joining the token texts is what decoding does anyway.
  } else if (t == "Replace") {
    std::string from = string_pattern(d.at("pattern"), "decoder Replace");
    if (from.empty()) fail("decoder Replace with an empty pattern is not supported");
    v.decode_replace.emplace_back(from, d.at("content").get<std::string>());
  } else if (t == "Strip") {
    if (d.value("content", std::string(" ")) != " " || d.value("stop", 0) != 0)
      fail("decoder Strip is only supported for leading spaces");
    v.strip_leading_spaces = d.value("start", 0);
  } else {
    fail("decoder '" + t + "' is not supported (supported: ByteLevel, ByteFallback, Fuse, Replace, Strip, Sequence)");
  }
}

void read_merge(const json& m, MergeList& out) {
  if (m.is_array() && m.size() == 2)
    return out.push_back(m[0].get_ref<const std::string&>(), m[1].get_ref<const std::string&>());
  const std::string_view s = m.get_ref<const std::string&>();
  size_t sp = s.find(' ', 1);
  if (sp == std::string::npos) fail("merge '" + std::string(s) + "' is not two tokens separated by a space");
  out.push_back(s.substr(0, sp), s.substr(sp + 1));
}

template <typename Vocab>
void set_token(Vocab& v, int64_t id, const std::string& text, TokenType type) {
  constexpr int64_t kMaxTokens = int64_t{1} << 30;
  if (id < 0 || id >= kMaxTokens) fail("token id " + std::to_string(id) + " is out of range");
  auto i = static_cast<size_t>(id);
  if (i >= v.tokens.size()) {
    v.tokens.resize(i + 1);
    v.types.resize(i + 1, TokenType::Unused);  // ids no entry names stay unused
  }
  v.tokens[i] = text;
  v.types[i] = type;
}

void read_model(const json& m, BpeVocab& v) {
  std::string t = m.value("type", std::string("BPE"));
  if (t != "BPE") fail("model '" + t + "' is not supported (supported: BPE)");
  if (!m.value("dropout", json()).is_null() && m.at("dropout").get<double>() != 0.0) fail("BPE dropout is not supported");
  v.byte_fallback = m.value("byte_fallback", false);
  for (const char* k : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    json s = m.value(k, json());
    if (!s.is_null() && !s.get<std::string>().empty()) fail(std::string("BPE ") + k + " is not supported");
  }
  v.ignore_merges = m.value("ignore_merges", false);
  v.fuse_unk = m.value("fuse_unk", false);
  for (const auto& [text, id] : m.at("vocab").items()) set_token(v, id.get<int64_t>(), text, TokenType::Normal);
  if (json unk = m.value("unk_token", json()); !unk.is_null()) {
    const auto& text = unk.get_ref<const std::string&>();
    if (!m.at("vocab").contains(text)) fail("BPE unk_token '" + text + "' is not in the vocabulary");
    v.unk_id = m.at("vocab").at(text).get<int32_t>();
  }
  const json& merges = m.at("merges");
  v.merges.reserve(merges.size());
  for (const auto& mg : merges) read_merge(mg, v.merges);
}

template <typename Vocab>
void read_added_tokens(const json& added, Vocab& v) {
  for (const auto& a : added) {
    AddedToken t;
    t.content = a.at("content").get<std::string>();
    int64_t id = a.at("id").get<int64_t>();
    t.special = a.value("special", false);
    t.lstrip = a.value("lstrip", false);
    t.rstrip = a.value("rstrip", false);
    t.single_word = a.value("single_word", false);
    t.normalized = a.value("normalized", !t.special);  // `tokenizers`' default
    set_token(v, id, t.content, t.special ? TokenType::Control : TokenType::UserDefined);
    t.id = static_cast<int32_t>(id);
    v.added.push_back(std::move(t));
  }
}

int32_t find_id(const BpeVocab& v, const std::string& text) {
  if (text.empty()) return -1;
  for (size_t i = 0; i < v.tokens.size(); ++i)
    if (v.tokens[i] == text && v.types[i] != TokenType::Unused) return static_cast<int32_t>(i);
  return -1;
}

bool flag(const json& j, const char* key, bool fallback) {
  const json v = j.value(key, json());
  return v.is_null() ? fallback : v.get<bool>();
}

WordPieceVocab read_wordpiece(const json& j) {
  WordPieceVocab v;
  const json& m = j.at("model");
  for (const auto& [text, id] : m.at("vocab").items()) set_token(v, id.get<int64_t>(), text, TokenType::Normal);
  const std::string unk = m.value("unk_token", std::string("[UNK]"));
  if (!m.at("vocab").contains(unk)) fail("WordPiece unk_token '" + unk + "' is not in the vocabulary");
  v.unk_id = m.at("vocab").at(unk).get<int32_t>();
  v.continuing_prefix = m.value("continuing_subword_prefix", std::string("##"));
  v.max_input_chars_per_word = m.value("max_input_chars_per_word", size_t{100});
  read_added_tokens(j.value("added_tokens", json::array()), v);
  const json n = j.value("normalizer", json());
  if (n.is_null()) {
    v.normalize = false;
  } else if (type_of(n) == "BertNormalizer") {
    v.normalizer.clean_text = flag(n, "clean_text", true);
    v.normalizer.handle_chinese_chars = flag(n, "handle_chinese_chars", true);
    v.normalizer.lowercase = flag(n, "lowercase", true);
    v.normalizer.strip_accents = flag(n, "strip_accents", v.normalizer.lowercase);  // null: as lowercase
  } else {
    fail("normalizer '" + type_of(n) + "' with a WordPiece model is not supported (supported: BertNormalizer)");
  }
  const json pre = j.value("pre_tokenizer", json());
  if (pre.is_null()) v.pre_tokenize = false;
  else if (type_of(pre) != "BertPreTokenizer")
    fail("pre-tokenizer '" + type_of(pre) + "' with a WordPiece model is not supported (supported: BertPreTokenizer)");
  const json dec = j.value("decoder", json());
  if (type_of(dec) == "WordPiece") v.decode_cleanup = flag(dec, "cleanup", true);
  else if (!dec.is_null()) fail("decoder '" + type_of(dec) + "' with a WordPiece model is not supported (supported: WordPiece)");
  const json post = j.value("post_processor", json());
  if (type_of(post) == "BertProcessing") {  // {"sep": ["[SEP]", 102], "cls": ["[CLS]", 101]}
    v.bos_id = post.at("cls").at(1).get<int32_t>();
    v.eos_id = post.at("sep").at(1).get<int32_t>();
    v.add_bos = v.add_eos = true;
  } else {
    read_post_processor(post, v);
  }
  return v;
}

BpeVocab read_vocab(const json& j, const json& config) {
  if (!j.is_object()) fail("tokenizer.json is not an object");
  BpeVocab v;
  read_model(j.at("model"), v);
  read_added_tokens(j.value("added_tokens", json::array()), v);
  read_normalizer(j.value("normalizer", json()), v);
  bool byte_level = false;
  const json pre = j.value("pre_tokenizer", json());
  if (!pre.is_null()) read_pre_tokenizer(pre, v, byte_level);
  DecoderInfo dec;
  read_decoder(j.value("decoder", json()), v, dec);
  if (byte_level) {
    if (v.byte_fallback) fail("BPE byte_fallback with a ByteLevel pre-tokenizer is not supported");
    if (!v.decode_replace.empty() || dec.byte_fallback || v.strip_leading_spaces)
      fail("decoder does not match the ByteLevel pre-tokenizer (expected a ByteLevel decoder)");
  } else {
    // SentencePiece-style: symbols are characters, spaces are escaped by the normalizer.
    if (dec.byte_level) fail("ByteLevel decoder without a ByteLevel pre-tokenizer is not supported");
    if (dec.byte_fallback != v.byte_fallback) fail("decoder ByteFallback and the model's byte_fallback disagree");
    v.symbols = BpeVocab::Symbols::Chars;
  }
  if (config.is_object()) {
    v.bos_id = find_id(v, token_content(config.value("bos_token", json())));
    v.eos_id = find_id(v, token_content(config.value("eos_token", json())));
  }
  // After the config: a template's BOS is the one actually added.
  read_post_processor(j.value("post_processor", json()), v);
  return v;
}

}  // namespace

namespace {

BpeVocab bpe_vocab_from(const json& j, const std::string& tokenizer_json_path) {
  json config;
  auto config_path = std::filesystem::path(tokenizer_json_path).parent_path() / "tokenizer_config.json";
  if (std::filesystem::exists(config_path)) config = read_json(config_path.string());
  try {
    return read_vocab(j, config);
  } catch (const json::exception& e) {  // a field of the wrong type or missing
    fail("'" + tokenizer_json_path + "' is malformed: " + e.what());
  }
}

}  // namespace

BpeVocab bpe_vocab_from_hf_json(const std::string& tokenizer_json_path) {
  return bpe_vocab_from(read_json(tokenizer_json_path), tokenizer_json_path);
}

std::unique_ptr<Tokenizer> tokenizer_from_hf_json(const std::string& tokenizer_json_path) {
  const json j = read_json(tokenizer_json_path);
  if (j.is_object() && j.contains("model") && type_of(j.at("model")) == "WordPiece") {
    try {
      return std::make_unique<WordPieceTokenizer>(read_wordpiece(j));
    } catch (const json::exception& e) {
      fail("'" + tokenizer_json_path + "' is malformed: " + e.what());
    }
  }
  return std::make_unique<BpeTokenizer>(bpe_vocab_from(j, tokenizer_json_path));
}

}  // namespace minnow
