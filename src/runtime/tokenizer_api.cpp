// minnow::TextTokenizer: the public face of a Tokenizer loaded on its own.
#include <filesystem>

#include "base/error.hpp"
#include "formats/gguf.hpp"
#include "minnow/tokenizer.hpp"
#include "tokenizer/tokenizer.hpp"

namespace minnow {

TextTokenizer::TextTokenizer(std::unique_ptr<Tokenizer> t) : t_(std::move(t)) {}
TextTokenizer::~TextTokenizer() = default;

std::unique_ptr<TextTokenizer> TextTokenizer::load(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    auto json_path = fs::path(path) / "tokenizer.json";
    if (!fs::exists(json_path, ec)) throw Error("tokenizer: directory '" + path + "' has no tokenizer.json");
    return load(json_path.string());
  }
  if (!fs::exists(path, ec)) throw Error("tokenizer: cannot open '" + path + "': no such file");
  if (fs::path(path).extension() == ".json")
    return std::unique_ptr<TextTokenizer>(new TextTokenizer(tokenizer_from_hf_json(path)));
  auto gguf = GgufFile::open(path);
  return std::unique_ptr<TextTokenizer>(new TextTokenizer(tokenizer_from_gguf(*gguf)));
}

std::vector<int32_t> TextTokenizer::encode(std::string_view text, bool parse_special) const {
  return t_->encode(text, parse_special);
}

std::string TextTokenizer::decode(std::span<const int32_t> ids, bool render_special) const {
  return t_->decode(std::vector<int32_t>(ids.begin(), ids.end()), render_special);
}

std::string TextTokenizer::token_text(int32_t id) const {
  return std::string(t_->token_text(id));  // "" out of range
}

int TextTokenizer::vocab_size() const { return t_->vocab_size(); }

}  // namespace minnow
