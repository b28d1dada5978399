#include "tokenizer/pretokenizer.hpp"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <utility>

#include "base/error.hpp"

namespace minnow {
namespace {

// The published pre-tokenizer patterns of each family (facts of those tokenizers).
constexpr const char* kGpt2 =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
constexpr const char* kLlama3 =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr const char* kQwen2 =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr const char* kEachDigit = R"(\p{N})";

struct Preset {
  const char* name;
  std::vector<const char*> patterns;
};

const std::vector<Preset>& presets() {
  static const std::vector<Preset> p = {
      {"gpt2", {kGpt2}},
      {"default", {kGpt2}},
      {"smollm", {kEachDigit, kGpt2}},  // SmolLM: Digits(individual) then the GPT-2 split
      {"llama-bpe", {kLlama3}},
      {"llama3", {kLlama3}},
      {"qwen2", {kQwen2}},
  };
  return p;
}

}  // namespace

struct PreTokenizer::Regex {
  PreSplit::Behavior behavior;
  pcre2_code* code = nullptr;
  ~Regex() { pcre2_code_free(code); }
};

std::vector<PreSplit> PreTokenizer::preset(std::string_view name) {
  for (const auto& p : presets())
    if (name == p.name) {
      std::vector<PreSplit> out;
      for (const char* pat : p.patterns) out.push_back({pat, PreSplit::Behavior::Isolated});
      return out;
    }
  throw Error("tokenizer: pre-tokenizer '" + std::string(name) + "' is not supported yet");
}

PreTokenizer::PreTokenizer(const std::vector<PreSplit>& splits) {
  for (const auto& split : splits) {
    const std::string& pat = split.regex;
    auto r = std::make_unique<Regex>();
    r->behavior = split.behavior;
    int err = 0;
    PCRE2_SIZE off = 0;
    // UCP: \s, \p{..} follow Unicode; MATCH_INVALID_UTF: arbitrary bytes never fail the match.
    r->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pat.data()), pat.size(),
                            PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF, &err, &off, nullptr);
    if (!r->code) {
      PCRE2_UCHAR msg[256];
      pcre2_get_error_message(err, msg, sizeof msg);
      throw Error("tokenizer: pre-tokenizer regex '" + pat + "' does not compile at offset " + std::to_string(off) +
                  ": " + reinterpret_cast<const char*>(msg));
    }
    pcre2_jit_compile(r->code, PCRE2_JIT_COMPLETE);  // optional speed-up; falls back silently
    regexes_.push_back(std::move(r));
  }
}

PreTokenizer::~PreTokenizer() = default;

std::vector<std::string> PreTokenizer::known_names() {
  std::vector<std::string> out;
  for (const auto& p : presets()) out.emplace_back(p.name);
  return out;
}

namespace {

// Splits s by the regex into matches and the gaps between them, in order; with
// MergedWithPrevious a match joins the gap before it (unless that was a match too).
void split_one(pcre2_code* code, pcre2_match_data* md, PreSplit::Behavior behavior, std::string_view s,
               std::vector<std::string_view>& out) {
  auto subject = reinterpret_cast<PCRE2_SPTR>(s.data());
  const bool merge = behavior == PreSplit::Behavior::MergedWithPrevious;
  size_t pos = 0, last = 0;
  while (pos < s.size()) {
    int rc = pcre2_match(code, subject, s.size(), pos, 0, md, nullptr);
    if (rc < 0) break;  // no more matches (or invalid UTF-8 tail): the rest is one gap
    PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
    size_t b = ov[0], e = ov[1];
    if (e == b) {  // empty match: step over one byte to make progress
      pos = e + 1;
      continue;
    }
    if (merge && b > last) {
      out.push_back(s.substr(last, e - last));
    } else {
      if (b > last) out.push_back(s.substr(last, b - last));
      out.push_back(s.substr(b, e - b));
    }
    pos = last = e;
  }
  if (last < s.size()) out.push_back(s.substr(last));
}

}  // namespace

void PreTokenizer::split(std::string_view text, std::vector<std::string_view>& out) const {
  std::vector<std::string_view> cur{text}, next;
  for (const auto& r : regexes_) {
    next.clear();
    // Match data per call, not per regex: one tokenizer serves many threads (the server's).
    std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> md(
        pcre2_match_data_create_from_pattern(r->code, nullptr), pcre2_match_data_free);
    if (!md) throw Error("tokenizer: out of memory for a regex match");
    for (auto piece : cur) split_one(r->code, md.get(), r->behavior, piece, next);
    std::swap(cur, next);
  }
  out.insert(out.end(), cur.begin(), cur.end());
}

}  // namespace minnow
