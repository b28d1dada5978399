#include "encoder/sentence_embedder.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "base/error.hpp"
#include "tokenizer/bert_normalizer.hpp"

namespace minnow {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

[[noreturn]] void fail(const std::string& msg) { throw Error("embeddings: " + msg); }

// The JSON object in dir/name, or null when the file does not exist.
json read_optional(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return nullptr;
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot open '" + path.string() + "'");
  try {
    json j = json::parse(in);
    if (!j.is_object() && !j.is_array()) fail("'" + path.string() + "' is not a JSON object or array");
    return j;
  } catch (const json::exception& e) {
    fail("'" + path.string() + "' is not valid JSON: " + e.what());
  }
}

Pooling read_pooling(const json& p, const fs::path& path) {
  auto on = [&](const char* key) { return p.contains(key) && p.at(key).is_boolean() && p.at(key).get<bool>(); };
  for (const char* k : {"pooling_mode_weightedmean_tokens", "pooling_mode_lasttoken"})
    if (on(k)) fail("'" + path.string() + "': " + k + " is not supported (supported: cls, mean, max, mean_sqrt_len)");
  std::vector<Pooling> modes;
  if (on("pooling_mode_cls_token")) modes.push_back(Pooling::Cls);
  if (on("pooling_mode_mean_tokens")) modes.push_back(Pooling::Mean);
  if (on("pooling_mode_max_tokens")) modes.push_back(Pooling::Max);
  if (on("pooling_mode_mean_sqrt_len_tokens")) modes.push_back(Pooling::MeanSqrtLen);
  if (modes.size() != 1)
    fail("'" + path.string() + "' must turn on exactly one pooling mode (" + std::to_string(modes.size()) + " are on)");
  return modes[0];
}

}  // namespace

const char* pooling_name(Pooling p) {
  switch (p) {
    case Pooling::Mean: return "mean";
    case Pooling::Cls: return "cls";
    case Pooling::Max: return "max";
    case Pooling::MeanSqrtLen: return "mean_sqrt_len";
  }
  return "?";
}

SentenceConfig read_sentence_config(const std::string& dir) {
  SentenceConfig c;
  const fs::path root(dir);
  try {
    const json modules = read_optional(root / "modules.json");
    if (modules.is_array()) {
      bool transformer = false;
      for (const json& m : modules) {
        const std::string type = m.value("type", std::string());
        const std::string path = m.value("path", std::string());
        if (type.ends_with(".Transformer")) {
          if (!path.empty()) fail("modules.json: a Transformer module outside the model directory is not supported");
          transformer = true;
        } else if (type.ends_with(".Pooling")) {
          const fs::path p = root / path / "config.json";
          const json pc = read_optional(p);
          if (!pc.is_object()) fail("'" + p.string() + "' is missing");
          c.pooling = read_pooling(pc, p);
        } else if (type.ends_with(".Normalize")) {
          c.normalize = true;
        } else {
          fail("modules.json: module '" + type + "' is not supported (supported: Transformer, Pooling, Normalize)");
        }
      }
      if (!transformer) fail("modules.json has no Transformer module");
    }
    const json st = read_optional(root / "sentence_bert_config.json");
    if (st.is_object()) {
      if (st.contains("max_seq_length") && st.at("max_seq_length").is_number_integer())
        c.max_tokens = st.at("max_seq_length").get<int64_t>();
      c.lowercase_input = st.value("do_lower_case", false);
    }
  } catch (const json::exception& e) {
    fail("'" + dir + "': a configuration file is malformed: " + e.what());
  }
  if (c.max_tokens < 0) fail("max_seq_length must not be negative");
  return c;
}

void pool_tokens(const float* hidden, int64_t len, int64_t dim, Pooling p, bool normalize, float* out) {
  if (p == Pooling::Cls || len == 0) {
    std::copy(hidden, hidden + dim, out);
  } else if (p == Pooling::Max) {
    std::copy(hidden, hidden + dim, out);
    for (int64_t t = 1; t < len; ++t)
      for (int64_t i = 0; i < dim; ++i) out[i] = std::max(out[i], hidden[t * dim + i]);
  } else {
    std::vector<double> sum(static_cast<size_t>(dim), 0.0);
    for (int64_t t = 0; t < len; ++t)
      for (int64_t i = 0; i < dim; ++i) sum[static_cast<size_t>(i)] += hidden[t * dim + i];
    const double div = p == Pooling::Mean ? static_cast<double>(len) : std::sqrt(static_cast<double>(len));
    for (int64_t i = 0; i < dim; ++i) out[i] = static_cast<float>(sum[static_cast<size_t>(i)] / div);
  }
  if (normalize) {  // as torch's F.normalize: x / max(|x|, 1e-12)
    double n2 = 0;
    for (int64_t i = 0; i < dim; ++i) n2 += static_cast<double>(out[i]) * out[i];
    const double inv = 1.0 / std::max(std::sqrt(n2), 1e-12);
    for (int64_t i = 0; i < dim; ++i) out[i] = static_cast<float>(out[i] * inv);
  }
}

SentenceEmbedder::SentenceEmbedder(const std::string& dir, int n_threads, BertEncoder::Precision precision)
    : pool_(n_threads) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) fail("'" + dir + "' is not a model directory (config.json, model.safetensors, tokenizer.json)");
  cfg_ = read_sentence_config(dir);
  const fs::path tok = fs::path(dir) / "tokenizer.json";
  if (!fs::exists(tok, ec)) fail("'" + dir + "' has no tokenizer.json");
  tokenizer_ = tokenizer_from_hf_json(tok.string());
  encoder_ = BertEncoder::load(dir, precision);
  const int64_t positions = encoder_->config().max_positions;
  if (cfg_.max_tokens == 0 || cfg_.max_tokens > positions) cfg_.max_tokens = positions;
  if (cfg_.max_tokens < 2) fail("max_seq_length " + std::to_string(cfg_.max_tokens) + " is too small");
}

std::vector<int32_t> SentenceEmbedder::tokenize(std::string_view text) const {
  std::vector<int32_t> ids;
  if (cfg_.lowercase_input) {
    std::string lowered;
    bert_normalize(text, {.clean_text = false, .handle_chinese_chars = false, .strip_accents = false, .lowercase = true},
                   lowered);
    ids = tokenizer_->encode(lowered, true);
  } else {
    ids = tokenizer_->encode(text, true);
  }
  truncate(ids);
  return ids;
}

void SentenceEmbedder::truncate(std::vector<int32_t>& ids) const {
  const auto max = static_cast<size_t>(cfg_.max_tokens);
  if (ids.size() <= max) return;
  // Keep the end token ([SEP]) the template added, as the tokenizer's truncation does.
  const bool keep_last = tokenizer_->eos_id() >= 0 && ids.back() == tokenizer_->eos_id();
  const int32_t last = ids.back();
  ids.resize(max);
  if (keep_last) ids.back() = last;
}

std::vector<float> SentenceEmbedder::embed(std::span<const std::vector<int32_t>> ids, int batch_size, int64_t* n_tokens) {
  if (batch_size < 1) fail("batch size must be at least 1");
  for (const auto& v : ids)
    if (v.empty()) fail("an empty token sequence has no embedding");
  const int64_t d = dim();
  std::vector<float> out(ids.size() * static_cast<size_t>(d));
  int64_t total = 0;
  std::vector<std::span<const int32_t>> seqs;
  for (size_t first = 0; first < ids.size(); first += static_cast<size_t>(batch_size)) {
    const size_t n = std::min(ids.size() - first, static_cast<size_t>(batch_size));
    seqs.assign(ids.begin() + static_cast<ptrdiff_t>(first), ids.begin() + static_cast<ptrdiff_t>(first + n));
    encoder_->forward(seqs, hidden_, pool_);
    int64_t row = 0;
    for (size_t i = 0; i < n; ++i) {
      const auto len = static_cast<int64_t>(seqs[i].size());
      pool_tokens(hidden_.data() + row * d, len, d, cfg_.pooling, cfg_.normalize, out.data() + (first + i) * d);
      row += len;
      total += len;
    }
  }
  if (n_tokens) *n_tokens = total;
  return out;
}

}  // namespace minnow
