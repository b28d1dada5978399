#include "formats/safetensors.hpp"

#include <algorithm>
#include <cstring>

#include <nlohmann/json.hpp>

#include "base/error.hpp"

namespace minnow {
namespace {

[[noreturn]] void fail(const std::string& msg) { throw Error("safetensors: " + msg); }

// Names and tokens come from the file: keep messages one short printable line.
std::string printable(std::string_view s, size_t max) {
  std::string out;
  for (size_t i = 0; i < s.size() && i < max; ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    out += (c >= 0x20 && c < 0x7f) ? static_cast<char>(c) : '?';
  }
  return s.size() > max ? out + "..." : out;
}
std::string quote(std::string_view s) { return "'" + printable(s, 80) + "'"; }

std::string tensor_msg(std::string_view name, const std::string& what) { return "tensor " + quote(name) + ": " + what; }

// One header entry as written, before its fields are checked against each other.
struct RawEntry {
  std::string name;
  std::optional<std::string> dtype;
  std::optional<std::vector<uint64_t>> shape;
  std::optional<std::vector<uint64_t>> offsets;
};

// Builds entries straight from SAX events. A valid header nests at most three deep
// ({name: {shape: [...]}}), so anything else is rejected as it arrives: no DOM is built and
// memory stays proportional to the header, whatever its shape. Also catches duplicate keys,
// which a DOM would silently merge.
class HeaderReader final : public nlohmann::json_sax<nlohmann::json> {
 public:
  std::vector<RawEntry> entries;
  std::map<std::string, size_t, std::less<>> names;  // name -> index in entries
  std::map<std::string, std::string, std::less<>> metadata;

  bool null() override { return reject("null"); }
  bool boolean(bool) override { return reject("a boolean"); }
  bool number_integer(number_integer_t v) override {
    if (where_ == Where::Array && v >= 0) return push(static_cast<uint64_t>(v));
    return reject(v < 0 ? ("the negative number " + std::to_string(v)).c_str() : "a number");
  }
  bool number_unsigned(number_unsigned_t v) override {
    if (where_ == Where::Array) return push(v);
    return reject("a number");
  }
  bool number_float(number_float_t, const string_t& text) override {
    return reject(("the non-integer " + quote(text)).c_str());
  }
  bool binary(binary_t&) override { return reject("binary data"); }

  bool string(string_t& v) override {
    if (where_ == Where::Metadata) {
      metadata.emplace(key_, std::move(v));
      return true;
    }
    if (where_ == Where::Entry && field_ == Field::DType) {
      entries.back().dtype = std::move(v);
      return true;
    }
    return reject("a string");
  }

  bool start_object(std::size_t) override {
    switch (where_) {
      case Where::Start: where_ = Where::Root; return true;
      case Where::Root:
        if (key_ == "__metadata__") {
          where_ = Where::Metadata;
        } else {
          names.emplace(key_, entries.size());
          entries.push_back(RawEntry{key_, {}, {}, {}});
          where_ = Where::Entry;
        }
        return true;
      default: return reject("an object");
    }
  }

  bool key(string_t& k) override {
    switch (where_) {
      case Where::Root:
        if (k == "__metadata__" ? seen_metadata_ : names.contains(k)) fail("duplicate header key " + quote(k));
        seen_metadata_ |= k == "__metadata__";
        break;
      case Where::Metadata:
        if (metadata.contains(k)) fail("duplicate __metadata__ key " + quote(k));
        break;
      case Where::Entry: {
        RawEntry& e = entries.back();
        bool dup;
        if (k == "dtype") field_ = Field::DType, dup = e.dtype.has_value();
        else if (k == "shape") field_ = Field::Shape, dup = e.shape.has_value();
        else if (k == "data_offsets") field_ = Field::Offsets, dup = e.offsets.has_value();
        else fail(tensor_msg(e.name, "unknown key " + quote(k) + " (expected dtype, shape, data_offsets)"));
        if (dup) fail(tensor_msg(e.name, "duplicate key " + quote(k)));
        break;
      }
      default: break;  // keys only occur inside objects
    }
    key_ = std::move(k);
    return true;
  }

  bool end_object() override {
    where_ = where_ == Where::Root ? Where::Done : Where::Root;
    return true;
  }

  bool start_array(std::size_t) override {
    if (where_ == Where::Entry && field_ != Field::DType) {
      auto& slot = field_ == Field::Shape ? entries.back().shape : entries.back().offsets;
      slot.emplace();
      where_ = Where::Array;
      return true;
    }
    return reject("an array");
  }

  bool end_array() override {
    where_ = Where::Entry;
    return true;
  }

  bool parse_error(std::size_t pos, const std::string&, const nlohmann::detail::exception& ex) override {
    std::string_view msg = ex.what();
    if (auto p = msg.find("] "); p != std::string_view::npos) msg.remove_prefix(p + 2);  // "[json.exception...] "
    fail("header is not valid JSON (header byte " + std::to_string(pos) + "): " + printable(msg, 200));
  }

 private:
  enum class Where { Start, Root, Metadata, Entry, Array, Done };
  enum class Field { DType, Shape, Offsets };

  bool push(uint64_t v) {
    RawEntry& e = entries.back();
    auto& arr = field_ == Field::Shape ? *e.shape : *e.offsets;
    // Stop long arrays early rather than collecting them; the exact count is reported later.
    size_t cap = field_ == Field::Shape ? SafetensorsFile::kMaxDims : 2;
    if (arr.size() > cap) fail(tensor_msg(e.name, std::string(field_name()) + " has more than " + std::to_string(cap) + " entries"));
    arr.push_back(v);
    return true;
  }

  const char* field_name() const {
    return field_ == Field::DType ? "dtype" : field_ == Field::Shape ? "shape" : "data_offsets";
  }

  // A value of the wrong kind for where it appears.
  [[noreturn]] bool reject(const char* what) {
    switch (where_) {
      case Where::Start: fail(std::string("header is not a JSON object but ") + what);
      case Where::Root:
        if (key_ == "__metadata__") fail(std::string("__metadata__ is ") + what + ", not an object");
        fail(tensor_msg(key_, std::string("entry is ") + what + ", not an object"));
      case Where::Metadata: fail("__metadata__ value " + quote(key_) + " is " + what + ", not a string");
      case Where::Entry:
        fail(tensor_msg(entries.back().name, std::string(field_name()) + " is " + what + ", not " +
                                                 (field_ == Field::DType ? "a string" : "an array")));
      case Where::Array:
        fail(tensor_msg(entries.back().name, std::string(field_name()) + " holds " + what +
                                                 ", not a non-negative integer"));
      case Where::Done: break;
    }
    fail(std::string("unexpected ") + what + " after the header object");
  }

  Where where_ = Where::Start;
  Field field_ = Field::DType;
  std::string key_;
  bool seen_metadata_ = false;
};

std::string dims_str(const std::vector<uint64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

}  // namespace

std::optional<uint32_t> safetensors_dtype_size(std::string_view d) {
  static const std::map<std::string_view, uint32_t> sizes = {
      {"BOOL", 1}, {"U8", 1}, {"I8", 1}, {"F8_E4M3", 1}, {"F8_E5M2", 1}, {"F8_E8M0", 1},
      {"U16", 2}, {"I16", 2}, {"F16", 2}, {"BF16", 2},
      {"U32", 4}, {"I32", 4}, {"F32", 4},
      {"U64", 8}, {"I64", 8}, {"F64", 8}, {"C64", 8},
  };
  auto it = sizes.find(d);
  return it == sizes.end() ? std::nullopt : std::optional<uint32_t>(it->second);
}

std::unique_ptr<SafetensorsFile> SafetensorsFile::open(const std::string& path) {
  auto map = std::make_unique<MappedFile>(path);
  std::unique_ptr<SafetensorsFile> f(new SafetensorsFile());
  try {
    f->parse_image(map->data(), map->size());
  } catch (const Error& e) {
    throw Error(path + ": " + e.what());
  }
  f->map_ = std::move(map);
  f->path_ = path;
  return f;
}

std::unique_ptr<SafetensorsFile> SafetensorsFile::parse(const uint8_t* bytes, size_t size) {
  std::unique_ptr<SafetensorsFile> f(new SafetensorsFile());
  f->parse_image(bytes, size);
  return f;
}

const SafetensorsTensor* SafetensorsFile::find(std::string_view name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &tensors_[it->second];
}

void SafetensorsFile::parse_image(const uint8_t* bytes, size_t size) {
  if (size < 8) fail("file is " + std::to_string(size) + " bytes, too short for the 8-byte header length");
  uint64_t header_len = 0;
  for (int k = 0; k < 8; ++k) header_len |= uint64_t{bytes[k]} << (8 * k);
  if (header_len > kMaxHeaderBytes)
    fail("header length " + std::to_string(header_len) + " exceeds the limit of " + std::to_string(kMaxHeaderBytes));
  if (header_len > size - 8)
    fail("header length " + std::to_string(header_len) + " exceeds the " + std::to_string(size - 8) +
         " bytes after it");
  const uint64_t data_start = 8 + header_len;
  const uint64_t data_size = size - data_start;

  HeaderReader reader;
  const char* json = reinterpret_cast<const char*>(bytes + 8);
  try {
    if (!nlohmann::json::sax_parse(json, json + header_len, &reader)) fail("header is not valid JSON");
  } catch (const nlohmann::json::exception& e) {
    fail("header is not valid JSON: " + printable(e.what(), 200));
  }

  tensors_.reserve(reader.entries.size());
  for (RawEntry& e : reader.entries) {
    SafetensorsTensor t;
    t.name = std::move(e.name);
    auto bad = [&](const std::string& what) { fail(tensor_msg(t.name, what)); };
    if (!e.dtype) bad("missing dtype");
    if (!e.shape) bad("missing shape");
    if (!e.offsets) bad("missing data_offsets");
    t.dtype = std::move(*e.dtype);
    auto elem = safetensors_dtype_size(t.dtype);
    if (!elem) bad("unknown dtype " + quote(t.dtype));
    if (t.dtype == "F32") t.type = DType::F32;
    else if (t.dtype == "F16") t.type = DType::F16;
    else if (t.dtype == "BF16") t.type = DType::BF16;

    if (e.shape->size() > kMaxDims)
      bad("shape has " + std::to_string(e.shape->size()) + " dims (at most " + std::to_string(kMaxDims) + ")");
    uint64_t n = 1;
    for (uint64_t d : *e.shape) {
      if (d > static_cast<uint64_t>(INT64_MAX) || __builtin_mul_overflow(n, d, &n) || n > static_cast<uint64_t>(INT64_MAX))
        bad("element count of shape " + dims_str(*e.shape) + " overflows");
      t.shape.push_back(static_cast<int64_t>(d));
    }
    t.n_elements = n;
    if (__builtin_mul_overflow(n, uint64_t{*elem}, &t.n_bytes))
      bad("byte size of shape " + dims_str(*e.shape) + " overflows");

    const auto& off = *e.offsets;
    if (off.size() != 2) bad("data_offsets has " + std::to_string(off.size()) + " entries, not 2");
    if (off[0] > off[1]) bad("data_offsets " + dims_str(off) + " begin after they end");
    if (off[1] > data_size)
      bad("data_offsets " + dims_str(off) + " extend past the " + std::to_string(data_size) + "-byte data section");
    if (off[1] - off[0] != t.n_bytes)
      bad("data_offsets " + dims_str(off) + " span " + std::to_string(off[1] - off[0]) + " bytes but " + t.dtype +
          " shape " + dims_str(*e.shape) + " needs " + std::to_string(t.n_bytes));
    // data_start + off[0] <= size, so no overflow. Reading a misaligned float is undefined
    // behaviour for the kernels; real writers pad the header so that this never happens.
    if (t.n_bytes > 0 && (data_start + off[0]) % *elem != 0)
      bad("data at file offset " + std::to_string(data_start + off[0]) + " is not aligned to its " +
          std::to_string(*elem) + "-byte " + t.dtype + " elements");
    t.offset = off[0];
    t.data = bytes + data_start + off[0];
    tensors_.push_back(std::move(t));
  }
  index_ = std::move(reader.names);
  metadata_ = std::move(reader.metadata);

  // Non-empty tensors must not share bytes; empty ones occupy none.
  std::vector<const SafetensorsTensor*> by_offset;
  for (const auto& t : tensors_)
    if (t.n_bytes > 0) by_offset.push_back(&t);
  std::sort(by_offset.begin(), by_offset.end(), [](auto* a, auto* b) { return a->offset < b->offset; });
  for (size_t k = 1; k < by_offset.size(); ++k)
    if (by_offset[k - 1]->offset + by_offset[k - 1]->n_bytes > by_offset[k]->offset)
      fail("tensors " + quote(by_offset[k - 1]->name) + " and " + quote(by_offset[k]->name) + " overlap");
}

}  // namespace minnow
