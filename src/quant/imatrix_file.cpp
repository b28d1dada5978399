#include <cstring>
#include <fstream>
#include <iterator>

#include "base/error.hpp"
#include "formats/gguf.hpp"
#include "formats/gguf_writer.hpp"
#include "quant/imatrix.hpp"

namespace minnow::quant {
namespace {

constexpr std::string_view kSum2 = ".in_sum2", kCounts = ".counts";

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::vector<float> f32_values(const GgufTensor& t, const std::string& path) {
  if (t.type != DType::F32) throw Error("imatrix: '" + path + "': tensor '" + t.name + "' is not F32");
  std::vector<float> v(t.n_elements);
  std::memcpy(v.data(), t.data, t.n_elements * sizeof(float));
  return v;
}

Imatrix read_gguf(const std::string& path) {
  auto f = GgufFile::open(path);
  Imatrix m;
  for (const GgufTensor& t : f->tensors()) {
    if (!ends_with(t.name, kSum2)) continue;
    const std::string name = t.name.substr(0, t.name.size() - kSum2.size());
    const GgufTensor* c = f->find_tensor(name + std::string(kCounts));
    if (!c) throw Error("imatrix: '" + path + "': '" + t.name + "' has no '" + name + ".counts'");
    ImatrixEntry e{f32_values(t, path), f32_values(*c, path)};
    if (e.counts.empty() || e.sum2.size() % e.counts.size() != 0)
      throw Error("imatrix: '" + path + "': '" + name + "' has " + std::to_string(e.sum2.size()) + " sums for " +
                  std::to_string(e.counts.size()) + " counts");
    m.entries[name] = std::move(e);
  }
  if (m.entries.empty()) throw Error("imatrix: '" + path + "' has no <name>.in_sum2 tensors");
  if (const auto* a = f->get_array("imatrix.datasets", GgufType::STRING))
    for (std::string_view name : a->strings()) m.datasets.emplace_back(name);
  m.chunk_count = static_cast<int32_t>(f->get_int("imatrix.chunk_count").value_or(0));
  m.chunk_size = static_cast<int32_t>(f->get_int("imatrix.chunk_size").value_or(0));
  return m;
}

// Legacy llama-imatrix .dat: i32 n_entries, then per entry i32 name length, name, i32 ncall,
// i32 nval, nval f32 (mean squared activation times ncall); then i32 chunk count and the
// dataset's name (both optional). Every length is checked against what is left.
class Reader {
 public:
  Reader(const std::string& bytes, const std::string& path) : b_(bytes), path_(path) {}
  bool at_end() const { return pos_ == b_.size(); }
  int32_t i32() {
    int32_t v;
    std::memcpy(&v, take(4), 4);
    return v;
  }
  std::string str(int32_t n) {
    if (n < 0) fail("negative length");
    return std::string(take(static_cast<size_t>(n)), static_cast<size_t>(n));
  }
  std::vector<float> f32s(int32_t n) {
    if (n < 0) fail("negative count");
    std::vector<float> v(static_cast<size_t>(n));
    std::memcpy(v.data(), take(static_cast<size_t>(n) * 4), v.size() * 4);
    return v;
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw Error("imatrix: '" + path_ + "' (legacy .dat) at byte " + std::to_string(pos_) + ": " + what);
  }

 private:
  const char* take(size_t n) {
    if (n > b_.size() - pos_) fail("truncated");
    const char* p = b_.data() + pos_;
    pos_ += n;
    return p;
  }
  const std::string& b_;
  const std::string& path_;
  size_t pos_ = 0;
};

Imatrix read_legacy(const std::string& bytes, const std::string& path) {
  Reader r(bytes, path);
  Imatrix m;
  const int32_t n = r.i32();
  if (n <= 0) r.fail("no entries");
  for (int32_t i = 0; i < n; ++i) {
    std::string name = r.str(r.i32());
    const int32_t ncall = r.i32();
    ImatrixEntry e{r.f32s(r.i32()), {static_cast<float>(ncall)}};
    if (ncall <= 0) r.fail("entry '" + name + "' has " + std::to_string(ncall) + " calls");
    m.entries[std::move(name)] = std::move(e);
  }
  if (!r.at_end()) {
    m.chunk_count = r.i32();
    if (!r.at_end()) m.datasets.push_back(r.str(r.i32()));
  }
  return m;
}

}  // namespace

std::vector<float> Imatrix::importance(const std::string& name) const {
  auto it = entries.find(name);
  if (it == entries.end() || it->second.counts.size() != 1 || !(it->second.counts[0] > 0)) return {};
  std::vector<float> v(it->second.sum2);
  for (float& x : v) x /= it->second.counts[0];
  return v;
}

void write_imatrix(const Imatrix& m, const std::string& path) {
  GgufWriter w(path);
  w.set_string("general.type", "imatrix");
  w.set_strings("imatrix.datasets", m.datasets);
  w.set_u32("imatrix.chunk_count", static_cast<uint32_t>(m.chunk_count));
  w.set_u32("imatrix.chunk_size", static_cast<uint32_t>(m.chunk_size));
  for (const auto& [name, e] : m.entries) {  // std::map: sorted names, as llama-imatrix writes them
    const auto n_mat = static_cast<int64_t>(e.counts.size());
    w.add_tensor(name + std::string(kSum2), {static_cast<int64_t>(e.sum2.size()) / n_mat, n_mat}, DType::F32);
    w.add_tensor(name + std::string(kCounts), {1, n_mat}, DType::F32);
  }
  w.begin_data();
  for (const auto& [name, e] : m.entries) {
    w.write_tensor_data(e.sum2.data(), e.sum2.size() * sizeof(float));
    w.write_tensor_data(e.counts.data(), e.counts.size() * sizeof(float));
  }
  w.finish();
}

Imatrix read_imatrix(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("imatrix: cannot open '" + path + "'");
  char magic[4] = {};
  in.read(magic, 4);
  if (in.gcount() == 4 && std::memcmp(magic, "GGUF", 4) == 0) return read_gguf(path);
  in.seekg(0);
  const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  return read_legacy(bytes, path);
}

}  // namespace minnow::quant
