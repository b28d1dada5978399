// Text <-> token ids. One interface; the tokenizer models implement it.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace minnow {

class GgufFile;

// GGUF token types (tokenizer.ggml.token_type).
enum class TokenType : uint8_t { Normal = 1, Unknown = 2, Control = 3, UserDefined = 4, Unused = 5, Byte = 6 };

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;

  // parse_special: text such as "<|im_start|>" becomes the control token instead of its pieces.
  virtual std::vector<int32_t> encode(std::string_view text, bool parse_special) const = 0;
  // The bytes a token stands for (may be a partial UTF-8 sequence). Control tokens give
  // their text when render_special, else nothing.
  virtual std::string_view token_bytes(int32_t id, bool render_special = false) const = 0;
  virtual std::string_view token_text(int32_t id) const = 0;  // as stored in the vocabulary; "" out of range
  virtual int vocab_size() const = 0;

  int32_t bos_id() const { return bos_id_; }
  int32_t eos_id() const { return eos_id_; }
  bool add_bos() const { return add_bos_; }
  bool is_end_of_generation(int32_t id) const;
  const std::vector<int32_t>& end_of_generation_ids() const { return eog_ids_; }

  // Decodes a whole id sequence as Hugging Face's decode does (special tokens rendered as
  // text when asked); the default joins token_bytes.
  virtual std::string decode(const std::vector<int32_t>& ids, bool render_special = false) const;

 protected:
  int32_t bos_id_ = -1, eos_id_ = -1;
  bool add_bos_ = false;
  std::vector<int32_t> eog_ids_;
};

// Builds the tokenizer described by a GGUF file's tokenizer.ggml.* metadata.
std::unique_ptr<Tokenizer> tokenizer_from_gguf(const GgufFile& f);

// Builds a byte-level BPE tokenizer from a Hugging Face tokenizer.json, reading
// tokenizer_config.json from the same directory when present (BOS/EOS names). Encodes as
// the `tokenizers` package does with add_special_tokens=True. Throws Error on malformed
// files and on constructs that are not supported.
std::unique_ptr<Tokenizer> tokenizer_from_hf_json(const std::string& tokenizer_json_path);

}  // namespace minnow
