// minnow's tokenizer API, usable without loading model weights:
//
//   auto tok = minnow::TextTokenizer::load("path/to/tokenizer.json");  // or a GGUF file
//   std::vector<int32_t> ids = tok->encode("Hello world");
//   std::string text = tok->decode(ids);
//
// Encodes as Hugging Face's `tokenizers` does with add_special_tokens=True (BOS when the
// tokenizer declares it). Errors are thrown as minnow::Error with a one-line message.
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#ifndef MINNOW_API
#define MINNOW_API __attribute__((visibility("default")))
#endif

namespace minnow {

class Tokenizer;

class MINNOW_API TextTokenizer {
 public:
  // A tokenizer.json (tokenizer_config.json beside it is read too), a directory holding
  // one, or a GGUF file (only its tokenizer metadata is read).
  static std::unique_ptr<TextTokenizer> load(const std::string& path);
  ~TextTokenizer();

  // parse_special: control-token text such as "<|im_start|>" becomes that token.
  std::vector<int32_t> encode(std::string_view text, bool parse_special = true) const;
  // render_special: control tokens appear as their text instead of nothing.
  std::string decode(std::span<const int32_t> ids, bool render_special = false) const;
  std::string token_text(int32_t id) const;  // the vocabulary entry, as stored; "" if out of range
  int vocab_size() const;

 private:
  explicit TextTokenizer(std::unique_ptr<Tokenizer> t);
  std::unique_ptr<Tokenizer> t_;
};

}  // namespace minnow
