#include "models/write_packed.hpp"

#include <filesystem>
#include <unordered_map>

#include "base/error.hpp"
#include "formats/gguf.hpp"
#include "formats/gguf_writer.hpp"
#include "kernels/packed.hpp"
#include "models/loaders.hpp"
#include "models/packed_gguf.hpp"

namespace minnow {
namespace {

[[noreturn]] void fail(const std::string& msg) { throw Error("pack: " + msg); }

}  // namespace

PackStats write_packed_gguf(const std::string& in, const std::string& out) {
  if (std::filesystem::is_directory(in)) fail("'" + in + "' is a directory; minnow pack reads a GGUF file (minnow quantize makes one)");
  std::unique_ptr<GgufFile> f = GgufFile::open(in);
  if (!check_packed_gguf(*f).layout.empty()) fail("'" + in + "' is packed already");
  // The loader decides what gets packed and packs it; the file then stores those very bytes,
  // so a packed file runs exactly what the GGUF runs.
  std::unique_ptr<LoadedModel> m = load_gguf_model(in);
  std::unordered_map<const uint8_t*, const kernels::WeightView*> packed_at;  // by source data
  auto note = [&](const kernels::WeightView& w) {
    if (w.packed) packed_at.emplace(w.data, &w);
  };
  for (const auto& l : m->layers)
    for (const kernels::WeightView* w : {&l.wq, &l.wk, &l.wv, &l.wo, &l.gate, &l.up, &l.down}) note(*w);
  note(m->output);

  // load_gguf_model mapped the file again; its tensors sit at the same offsets as f's.
  std::unordered_map<std::string, const kernels::WeightView*> by_name;
  for (const auto& t : m->tensors)
    if (auto it = packed_at.find(t.data); it != packed_at.end()) by_name.emplace(t.name, it->second);

  GgufWriter w(out);
  for (const auto& [key, v] : f->metadata())
    if (key != "general.alignment") w.set_value(key, v);
  w.set_alignment(static_cast<uint32_t>(kernels::kPackedAlignment));
  w.set_string(kPackLayoutKey, kernels::kPackedLayoutName);
  w.set_i64(kPackVersionKey, kernels::kPackedLayoutVersion);
  PackStats s;
  for (const auto& t : f->tensors()) {
    if (by_name.count(t.name)) w.add_packed_tensor(t.name, t.dims, t.type), ++s.n_packed;
    else w.add_tensor(t.name, t.dims, t.type);
  }
  w.begin_data();
  for (size_t i = 0; i < f->tensors().size(); ++i) {
    const GgufTensor& t = f->tensors()[i];
    auto it = by_name.find(t.name);
    const uint8_t* src = it == by_name.end() ? t.data : it->second->packed;
    w.write_tensor_data(src, w.tensor_bytes(i));
    if (it == by_name.end()) f->drop_pages(t.data, t.n_bytes);  // read once
  }
  w.finish();
  s.n_tensors = f->tensors().size();
  s.in_bytes = f->file_size();
  s.out_bytes = std::filesystem::file_size(out);
  return s;
}

}  // namespace minnow
