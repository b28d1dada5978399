// Reads a Hugging Face tokenizer.json (+ tokenizer_config.json beside it) into the
// byte-level BPE model. Only constructs whose behaviour is implemented are accepted; any
// other normalizer, pre-tokenizer, model option or template is an Error naming it, so a
// tokenizer never loads into something that encodes differently from `tokenizers`.
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "base/error.hpp"
#include "tokenizer/bpe.hpp"

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

void read_normalizer(const json& n, BpeVocab& v, int depth = 0) {
  check_depth(depth);
  if (n.is_null()) return;
  std::string t = type_of(n);
  if (t == "NFC") {
    v.nfc = true;
  } else if (t == "Sequence") {
    for (const auto& sub : n.at("normalizers")) read_normalizer(sub, v, depth + 1);
  } else {
    fail("normalizer '" + t + "' is not supported (supported: NFC)");
  }
}

// Flattens the pre-tokenizer into regexes; ByteLevel must come last, as it maps bytes to
// the characters the vocabulary is written in.
void read_pre_tokenizer(const json& p, BpeVocab& v, bool& byte_level, int depth = 0) {
  check_depth(depth);
  std::string t = type_of(p);
  if (byte_level) fail("pre-tokenizer '" + t + "' after ByteLevel is not supported");
  if (t == "Sequence") {
    for (const auto& sub : p.at("pretokenizers")) read_pre_tokenizer(sub, v, byte_level, depth + 1);
  } else if (t == "ByteLevel") {
    if (p.value("add_prefix_space", false)) fail("pre-tokenizer ByteLevel with add_prefix_space is not supported");
    if (p.value("use_regex", true))
      for (auto& pat : PreTokenizer::preset("gpt2")) v.pre_patterns.push_back(pat);
    byte_level = true;
  } else if (t == "Split") {
    const json& pat = p.at("pattern");
    if (p.value("behavior", std::string()) != "Isolated" || p.value("invert", false))
      fail("pre-tokenizer Split with behavior '" + p.value("behavior", std::string()) + "'" +
           (p.value("invert", false) ? " inverted" : "") + " is not supported (supported: Isolated)");
    if (pat.contains("Regex")) v.pre_patterns.push_back(pat.at("Regex").get<std::string>());
    else if (pat.contains("String")) v.pre_patterns.push_back("\\Q" + pat.at("String").get<std::string>() + "\\E");
    else fail("pre-tokenizer Split pattern must be Regex or String");
  } else if (t == "Digits") {
    v.pre_patterns.push_back(p.value("individual_digits", false) ? "\\p{N}" : "\\p{N}+");
  } else {
    fail("pre-tokenizer '" + t + "' is not supported (supported: Sequence, Split, ByteLevel, Digits)");
  }
}

// Post-processors only matter here when they add tokens; the one supported template is
// "<bos> $A" (Llama 3 style).
void read_post_processor(const json& p, BpeVocab& v, int depth = 0) {
  check_depth(depth);
  if (p.is_null()) return;
  std::string t = type_of(p);
  if (t == "Sequence") {
    for (const auto& sub : p.at("processors")) read_post_processor(sub, v, depth + 1);
  } else if (t == "ByteLevel") {
    // Only adjusts offsets.
  } else if (t == "TemplateProcessing") {
    const json& single = p.at("single");
    auto is_seq = [](const json& item) { return item.contains("Sequence"); };
    if (single.size() == 1 && is_seq(single[0])) return;
    if (single.size() != 2 || !single[0].contains("SpecialToken") || !is_seq(single[1]))
      fail("post-processor TemplateProcessing '" + single.dump() + "' is not supported (supported: a leading BOS)");
    std::string name = single[0].at("SpecialToken").at("id").get<std::string>();
    const json& ids = p.at("special_tokens").at(name).at("ids");
    if (ids.size() != 1) fail("post-processor special token '" + name + "' must be one id");
    v.bos_id = ids[0].get<int32_t>();
    v.add_bos = true;
  } else {
    fail("post-processor '" + t + "' is not supported (supported: ByteLevel, TemplateProcessing, Sequence)");
  }
}

void read_decoder(const json& d, int depth = 0) {
  check_depth(depth);
  if (d.is_null()) return;
  std::string t = type_of(d);
  if (t == "Sequence") {
    for (const auto& sub : d.at("decoders")) read_decoder(sub, depth + 1);
  } else if (t != "ByteLevel") {
    fail("decoder '" + t + "' is not supported (supported: ByteLevel)");
  }
}

std::pair<std::string, std::string> read_merge(const json& m) {
  if (m.is_array() && m.size() == 2) return {m[0].get<std::string>(), m[1].get<std::string>()};
  const auto& s = m.get_ref<const std::string&>();
  size_t sp = s.find(' ', 1);
  if (sp == std::string::npos) fail("merge '" + s + "' is not two tokens separated by a space");
  return {s.substr(0, sp), s.substr(sp + 1)};
}

void set_token(BpeVocab& v, int64_t id, const std::string& text, TokenType type) {
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
  if (m.value("byte_fallback", false)) fail("BPE byte_fallback is not supported");
  for (const char* k : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    json s = m.value(k, json());
    if (!s.is_null() && !s.get<std::string>().empty()) fail(std::string("BPE ") + k + " is not supported");
  }
  v.ignore_merges = m.value("ignore_merges", false);
  for (const auto& [text, id] : m.at("vocab").items()) set_token(v, id.get<int64_t>(), text, TokenType::Normal);
  const json& merges = m.at("merges");
  v.merges.reserve(merges.size());
  for (const auto& mg : merges) v.merges.push_back(read_merge(mg));
}

void read_added_tokens(const json& added, BpeVocab& v) {
  for (const auto& a : added) {
    std::string content = a.at("content").get<std::string>();
    for (const char* flag : {"lstrip", "rstrip", "single_word"})
      if (a.value(flag, false)) fail("added token '" + content + "' uses " + flag + ", which is not supported");
    set_token(v, a.at("id").get<int64_t>(), content, a.value("special", false) ? TokenType::Control : TokenType::UserDefined);
  }
}

int32_t find_id(const BpeVocab& v, const std::string& text) {
  if (text.empty()) return -1;
  for (size_t i = 0; i < v.tokens.size(); ++i)
    if (v.tokens[i] == text && v.types[i] != TokenType::Unused) return static_cast<int32_t>(i);
  return -1;
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
  if (!byte_level) fail("pre-tokenizer has no ByteLevel step (only byte-level BPE is supported)");
  read_decoder(j.value("decoder", json()));
  if (config.is_object()) {
    v.bos_id = find_id(v, token_content(config.value("bos_token", json())));
    v.eos_id = find_id(v, token_content(config.value("eos_token", json())));
  }
  // After the config: a template's BOS is the one actually added.
  read_post_processor(j.value("post_processor", json()), v);
  return v;
}

}  // namespace

std::unique_ptr<Tokenizer> tokenizer_from_hf_json(const std::string& tokenizer_json_path) {
  json j = read_json(tokenizer_json_path);
  json config;
  auto config_path = std::filesystem::path(tokenizer_json_path).parent_path() / "tokenizer_config.json";
  if (std::filesystem::exists(config_path)) config = read_json(config_path.string());
  try {
    return std::make_unique<BpeTokenizer>(read_vocab(j, config));
  } catch (const json::exception& e) {  // a field of the wrong type or missing
    fail("'" + tokenizer_json_path + "' is malformed: " + e.what());
  }
}

}  // namespace minnow
