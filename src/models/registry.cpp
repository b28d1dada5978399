// The supported families, and the loader a path goes to (a directory is a Hugging Face
// checkpoint, anything else a GGUF file).
#include <filesystem>

#include "base/error.hpp"
#include "models/family.hpp"
#include "models/loaders.hpp"

namespace minnow {
namespace {

const std::vector<const FamilySpec*>& families() {
  static const std::vector<const FamilySpec*> all = {&llama_family(), &qwen2_family(), &qwen3_family(), &gemma3_family()};
  return all;
}

}  // namespace

const FamilySpec* family_by_gguf_arch(std::string_view arch) {
  for (const FamilySpec* f : families())
    if (f->name == arch) return f;
  return nullptr;
}

const FamilySpec* family_by_hf_model_type(std::string_view model_type) {
  for (const FamilySpec* f : families())
    for (auto t : f->hf_model_types)
      if (t == model_type) return f;
  return nullptr;
}

std::string supported_families() {
  std::string out;
  for (const FamilySpec* f : families()) out += (out.empty() ? "" : ", ") + std::string(f->name);
  return out;
}

std::unique_ptr<LoadedModel> load_model(const std::string& path) {
  try {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) return load_hf_checkpoint(path);
    return load_gguf_model(path);
  } catch (const Error& e) {
    const std::string msg = e.what();
    if (msg.rfind(path, 0) == 0) throw;  // already names the path
    throw Error(path + ": " + msg);
  }
}

}  // namespace minnow
