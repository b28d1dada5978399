// Maps general.architecture to the family binder, then attaches tokenizer and template.
#include <string_view>

#include "base/error.hpp"
#include "models/families.hpp"

namespace minnow {
namespace {

struct Family {
  std::string_view arch;
  void (*bind)(const GgufFile&, LoadedModel&);
};

constexpr Family kFamilies[] = {
    {"llama", bind_llama},
};

}  // namespace

std::unique_ptr<LoadedModel> load_model(const std::string& path) {
  auto m = std::make_unique<LoadedModel>();
  m->file = GgufFile::open(path);
  const GgufFile& f = *m->file;
  try {
    auto arch = f.get_string("general.architecture");
    if (!arch) throw Error("model: missing metadata 'general.architecture'");
    m->config.arch = std::string(*arch);
    m->config.name = std::string(f.get_string("general.name").value_or(""));
    const Family* fam = nullptr;
    for (const auto& x : kFamilies)
      if (x.arch == *arch) fam = &x;
    if (!fam) throw Error("model: architecture '" + m->config.arch + "' is not supported yet (supported: llama)");
    fam->bind(f, *m);
    m->tokenizer = tokenizer_from_gguf(f);
    if (m->tokenizer->vocab_size() != m->config.vocab_size)
      throw Error("model: tokenizer has " + std::to_string(m->tokenizer->vocab_size()) +
                  " tokens but the embedding has " + std::to_string(m->config.vocab_size) + " rows");
    m->chat_template = std::string(f.get_string("tokenizer.chat_template").value_or(""));
  } catch (const Error& e) {
    throw Error(path + ": " + e.what());
  }
  return m;
}

}  // namespace minnow
