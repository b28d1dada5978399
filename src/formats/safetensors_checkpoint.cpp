// A Hugging Face checkpoint directory: model.safetensors.index.json and its shards, or a
// single model.safetensors. The index is untrusted like the shards: its file names must stay
// inside the directory and it must agree with what the shards hold.
#include <filesystem>
#include <set>

#include <nlohmann/json.hpp>

#include "base/error.hpp"
#include "formats/safetensors.hpp"

namespace minnow {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void fail(const std::string& msg) { throw Error("safetensors: " + msg); }

std::string quote(std::string_view s) {
  std::string out = "'";
  for (size_t i = 0; i < s.size() && i < 120; ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    out += (c >= 0x20 && c < 0x7f) ? static_cast<char>(c) : '?';
  }
  return out + (s.size() > 120 ? "...'" : "'");
}

// Collects the top-level "weight_map" (tensor -> file) from SAX events and skips every other
// value (e.g. "metadata") without storing it, so the index never builds a DOM. Duplicate
// tensor names are caught here; a DOM would keep only the last.
class IndexReader final : public nlohmann::json_sax<nlohmann::json> {
 public:
  std::map<std::string, std::string, std::less<>> weight_map;
  bool found = false;

  bool null() override { return value("null"); }
  bool boolean(bool) override { return value("a boolean"); }
  bool number_integer(number_integer_t) override { return value("a number"); }
  bool number_unsigned(number_unsigned_t) override { return value("a number"); }
  bool number_float(number_float_t, const string_t&) override { return value("a number"); }
  bool binary(binary_t&) override { return value("binary data"); }
  bool string(string_t& v) override {
    if (in_map_ && depth_ == 2) {
      weight_map.emplace(key_, std::move(v));
      return true;
    }
    return value("a string");
  }

  bool start_object(std::size_t) override {
    if (depth_ == 1 && key_ == "weight_map") in_map_ = found = true;
    else if (depth_ != 0) value("an object");
    ++depth_;
    return true;
  }
  bool start_array(std::size_t) override {
    value("an array");
    ++depth_;
    return true;
  }
  bool end_object() override {
    if (--depth_ == 1) in_map_ = false;
    return true;
  }
  bool end_array() override {
    --depth_;
    return true;
  }

  bool key(string_t& k) override {
    if (depth_ == 1) {
      if (k == "weight_map" && found) fail("duplicate key 'weight_map'");
      key_ = std::move(k);
    } else if (in_map_ && depth_ == 2) {
      if (weight_map.contains(k)) fail("weight_map names tensor " + quote(k) + " twice");
      key_ = std::move(k);
    }
    return true;
  }

  bool parse_error(std::size_t pos, const std::string&, const nlohmann::detail::exception&) override {
    fail("not valid JSON (error at byte " + std::to_string(pos) + ")");
  }

 private:
  // Checks a value (or the start of a container) against where it appears; anything in
  // positions the reader does not care about passes.
  bool value(const char* what) {
    if (depth_ == 0) fail(std::string("not a JSON object but ") + what);
    if (depth_ == 1 && key_ == "weight_map") fail(std::string("weight_map is ") + what + ", not an object");
    if (in_map_ && depth_ == 2) fail("weight_map entry " + quote(key_) + " is " + what + ", not a file name");
    return true;
  }

  size_t depth_ = 0;
  bool in_map_ = false;
  std::string key_;
};

// Shard names must be plain file names: the index must not reach outside the directory.
bool plain_file_name(std::string_view name) {
  return !name.empty() && name != "." && name != ".." && name.find_first_of(std::string_view("/\\\0", 3)) == std::string_view::npos;
}

std::map<std::string, std::string, std::less<>> read_index(const std::string& path) {
  MappedFile map(path);
  if (map.size() > SafetensorsCheckpoint::kMaxIndexBytes)
    fail(path + ": index is " + std::to_string(map.size()) + " bytes, over the limit of " +
         std::to_string(SafetensorsCheckpoint::kMaxIndexBytes));
  IndexReader reader;
  const char* text = reinterpret_cast<const char*>(map.data());
  try {
    if (!nlohmann::json::sax_parse(text, text + map.size(), &reader)) fail("not valid JSON");
    if (!reader.found) fail("no weight_map");
    if (reader.weight_map.empty()) fail("weight_map is empty");
    for (const auto& [tensor, file] : reader.weight_map)
      if (!plain_file_name(file))
        fail("weight_map maps " + quote(tensor) + " to " + quote(file) + ", which is not a plain file name");
  } catch (const Error& e) {
    throw Error(path + ": " + e.what());
  } catch (const nlohmann::json::exception&) {
    throw Error(path + ": safetensors: not valid JSON");
  }
  return std::move(reader.weight_map);
}

}  // namespace

std::unique_ptr<SafetensorsCheckpoint> SafetensorsCheckpoint::open(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) fail(quote(dir) + " is not a directory");
  std::unique_ptr<SafetensorsCheckpoint> c(new SafetensorsCheckpoint());
  const fs::path index_path = fs::path(dir) / "model.safetensors.index.json";
  const fs::path single = fs::path(dir) / "model.safetensors";

  if (!fs::exists(index_path, ec)) {
    if (!fs::exists(single, ec))
      fail(quote(dir) + " holds neither model.safetensors.index.json nor model.safetensors");
    c->add_file(SafetensorsFile::open(single.string()));
    return c;
  }

  const std::string index = index_path.string();
  auto index_fail = [&](const std::string& msg) { throw Error(index + ": safetensors: " + msg); };
  auto weight_map = read_index(index);
  std::set<std::string> shards;  // sorted, each opened once
  for (const auto& [tensor, file] : weight_map) shards.insert(file);
  for (const std::string& name : shards) {
    const fs::path p = fs::path(dir) / name;
    if (!fs::is_regular_file(p, ec)) index_fail("shard " + quote(name) + " is missing");
    c->add_file(SafetensorsFile::open(p.string()));
  }
  for (const auto& [tensor, file] : weight_map) {
    auto it = c->index_.find(tensor);
    if (it == c->index_.end() || fs::path(c->files_[it->second.file]->path()).filename() != file)
      index_fail("tensor " + quote(tensor) + " is not in its shard " + quote(file));
  }
  return c;
}

void SafetensorsCheckpoint::add_file(std::unique_ptr<SafetensorsFile> f) {
  const size_t fi = files_.size();
  for (const SafetensorsTensor& t : f->tensors()) {
    auto [it, inserted] = index_.emplace(t.name, Entry{&t, fi});
    if (!inserted)
      fail("tensor " + quote(t.name) + " is in both " + quote(files_[it->second.file]->path()) + " and " +
           quote(f->path()));
  }
  files_.push_back(std::move(f));
}

const SafetensorsTensor* SafetensorsCheckpoint::find(std::string_view name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : it->second.tensor;
}

std::vector<const SafetensorsTensor*> SafetensorsCheckpoint::tensors() const {
  std::vector<const SafetensorsTensor*> out;
  out.reserve(index_.size());
  for (const auto& [name, e] : index_) out.push_back(e.tensor);
  return out;
}

}  // namespace minnow
