#include "formats/gguf.hpp"

#include <algorithm>
#include <cstring>

#include "base/error.hpp"
#include "tensor/packed_types.hpp"

namespace minnow {
namespace {

constexpr int kMaxArrayDepth = 8;
constexpr uint32_t kMaxDims = 4;
// A decoded metadata value costs sizeof(GgufValue) however few bytes encode it, so without a
// cap a file with a huge u8 array would make elements() allocate ~80x its size. Real models
// need ~1M values (4 tokenizer arrays of a 262k vocabulary); this allows 4x that.
constexpr uint64_t kMaxMetadataValues = uint64_t{1} << 22;

[[noreturn]] void fail(const std::string& msg) { throw Error("gguf: " + msg); }

// Bounds-checked little-endian cursor over the file image.
class Cursor {
 public:
  Cursor(const uint8_t* p, size_t n) : p_(p), n_(n) {}
  size_t pos() const { return pos_; }
  size_t remaining() const { return n_ - pos_; }
  const uint8_t* here() const { return p_ + pos_; }
  void skip(size_t n, const char* what) {
    if (remaining() < n) fail(std::string("file truncated while reading ") + what + " at offset " + std::to_string(pos_));
    pos_ += n;
  }

  template <typename T>
  T read(const char* what) {
    if (remaining() < sizeof(T))
      fail(std::string("file truncated while reading ") + what + " at offset " + std::to_string(pos_));
    T v;
    std::memcpy(&v, p_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }

  std::string_view read_string(const char* what) {
    uint64_t len = read<uint64_t>(what);
    if (len > remaining())
      fail(std::string(what) + ": string length " + std::to_string(len) + " at offset " +
           std::to_string(pos_ - 8) + " exceeds the " + std::to_string(remaining()) + " bytes left");
    std::string_view s(reinterpret_cast<const char*>(p_ + pos_), len);
    pos_ += len;
    return s;
  }

 private:
  const uint8_t* p_;
  size_t n_;
  size_t pos_ = 0;
};

// Smallest encoded size of one value of type t, to reject absurd array counts before
// allocating anything.
uint64_t min_encoded_size(GgufType t) {
  switch (t) {
    case GgufType::U8: case GgufType::I8: case GgufType::BOOL: return 1;
    case GgufType::U16: case GgufType::I16: return 2;
    case GgufType::U32: case GgufType::I32: case GgufType::F32: return 4;
    case GgufType::U64: case GgufType::I64: case GgufType::F64: case GgufType::STRING: return 8;
    case GgufType::ARRAY: return 12;
  }
  return 1;
}

// Bytes per element of the types that need no per-element check (0: the others).
size_t fixed_size(GgufType t) {
  switch (t) {
    case GgufType::U8: case GgufType::I8: return 1;
    case GgufType::U16: case GgufType::I16: return 2;
    case GgufType::U32: case GgufType::I32: case GgufType::F32: return 4;
    case GgufType::U64: case GgufType::I64: case GgufType::F64: return 8;
    default: return 0;
  }
}

bool valid_type(uint32_t t) { return t <= static_cast<uint32_t>(GgufType::F64); }

// `budget` is how many more metadata values the file may hold (see kMaxMetadataValues).
GgufValue read_value(Cursor& c, GgufType type, const std::string& key, int depth, uint64_t& budget) {
  GgufValue v;
  v.type = type;
  const char* what = key.c_str();
  switch (type) {
    case GgufType::U8: v.u = c.read<uint8_t>(what); break;
    case GgufType::I8: v.i = c.read<int8_t>(what); break;
    case GgufType::U16: v.u = c.read<uint16_t>(what); break;
    case GgufType::I16: v.i = c.read<int16_t>(what); break;
    case GgufType::U32: v.u = c.read<uint32_t>(what); break;
    case GgufType::I32: v.i = c.read<int32_t>(what); break;
    case GgufType::U64: v.u = c.read<uint64_t>(what); break;
    case GgufType::I64: v.i = c.read<int64_t>(what); break;
    case GgufType::F32: v.f = c.read<float>(what); break;
    case GgufType::F64: v.f = c.read<double>(what); break;
    case GgufType::BOOL: {
      uint8_t b = c.read<uint8_t>(what);
      if (b > 1) fail("key '" + key + "': bool value " + std::to_string(b) + " is neither 0 nor 1");
      v.u = b;
      break;
    }
    case GgufType::STRING: v.str = c.read_string(what); break;
    case GgufType::ARRAY: {
      if (depth >= kMaxArrayDepth) fail("key '" + key + "': arrays nested deeper than " + std::to_string(kMaxArrayDepth));
      uint32_t et = c.read<uint32_t>(what);
      if (!valid_type(et)) fail("key '" + key + "': unknown array element type " + std::to_string(et));
      uint64_t count = c.read<uint64_t>(what);
      v.elem_type = static_cast<GgufType>(et);
      if (count > c.remaining() / min_encoded_size(v.elem_type))
        fail("key '" + key + "': array count " + std::to_string(count) + " cannot fit in the " +
             std::to_string(c.remaining()) + " bytes left");
      if (count > budget)
        fail("key '" + key + "': array count " + std::to_string(count) + " exceeds the limit of " +
             std::to_string(kMaxMetadataValues) + " metadata values per file");
      budget -= count;
      v.count = count;
      const uint8_t* begin = c.here();
      if (const size_t fixed = fixed_size(v.elem_type)) {
        c.skip(count * fixed, what);  // count * fixed <= remaining: checked above
      } else {
        // Strings, nested arrays and bools: walked element by element, each checked.
        for (uint64_t k = 0; k < count; ++k) read_value(c, v.elem_type, key, depth + 1, budget);
      }
      v.bytes = std::string_view(reinterpret_cast<const char*>(begin), static_cast<size_t>(c.here() - begin));
      break;
    }
  }
  return v;
}

}  // namespace

const char* gguf_type_name(GgufType t) {
  static const char* names[] = {"u8", "i8", "u16", "i16", "u32", "i32", "f32",
                                "bool", "string", "array", "u64", "i64", "f64"};
  auto i = static_cast<uint32_t>(t);
  return i < std::size(names) ? names[i] : "?";
}

bool GgufValue::is_integer() const {
  switch (type) {
    case GgufType::U8: case GgufType::U16: case GgufType::U32: case GgufType::U64:
    case GgufType::I8: case GgufType::I16: case GgufType::I32: case GgufType::I64: return true;
    default: return false;
  }
}

std::optional<int64_t> GgufValue::as_int() const {
  switch (type) {
    case GgufType::U8: case GgufType::U16: case GgufType::U32: case GgufType::U64:
      if (u > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
      return static_cast<int64_t>(u);
    case GgufType::I8: case GgufType::I16: case GgufType::I32: case GgufType::I64: return i;
    default: return std::nullopt;
  }
}

std::optional<double> GgufValue::as_float() const {
  if (type == GgufType::F32 || type == GgufType::F64) return f;
  if (auto n = as_int()) return static_cast<double>(*n);
  return std::nullopt;
}

namespace {
// Elements to reserve for: a value built by hand may claim more than its bytes hold.
size_t plausible_count(const GgufValue& v) {
  return static_cast<size_t>(std::min<uint64_t>(v.count, v.bytes.size() / min_encoded_size(v.elem_type)));
}
}  // namespace

std::vector<GgufValue> GgufValue::elements() const {
  std::vector<GgufValue> out;
  if (type != GgufType::ARRAY) return out;
  Cursor c(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  uint64_t budget = kMaxMetadataValues;  // the file was parsed within it
  const std::string key = "array element";
  out.reserve(plausible_count(*this));
  for (uint64_t k = 0; k < count; ++k) out.push_back(read_value(c, elem_type, key, 1, budget));
  return out;
}

std::vector<std::string_view> GgufValue::strings() const {
  std::vector<std::string_view> out;
  if (type != GgufType::ARRAY || elem_type != GgufType::STRING) return out;
  Cursor c(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  out.reserve(plausible_count(*this));
  for (uint64_t k = 0; k < count; ++k) out.push_back(c.read_string("array element"));
  return out;
}

std::vector<int64_t> GgufValue::ints() const {
  std::vector<int64_t> out;
  if (type != GgufType::ARRAY || !fixed_size(elem_type) || elem_type == GgufType::F32 || elem_type == GgufType::F64)
    return out;
  Cursor c(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  out.reserve(plausible_count(*this));
  for (uint64_t k = 0; k < count; ++k) {
    switch (elem_type) {
      case GgufType::U8: out.push_back(c.read<uint8_t>("array element")); break;
      case GgufType::I8: out.push_back(c.read<int8_t>("array element")); break;
      case GgufType::U16: out.push_back(c.read<uint16_t>("array element")); break;
      case GgufType::I16: out.push_back(c.read<int16_t>("array element")); break;
      case GgufType::U32: out.push_back(c.read<uint32_t>("array element")); break;
      case GgufType::I32: out.push_back(c.read<int32_t>("array element")); break;
      case GgufType::I64: out.push_back(c.read<int64_t>("array element")); break;
      default: out.push_back(static_cast<int64_t>(c.read<uint64_t>("array element"))); break;  // U64: wraps above INT64_MAX
    }
  }
  return out;
}

std::vector<double> GgufValue::floats() const {
  std::vector<double> out;
  if (type != GgufType::ARRAY || (elem_type != GgufType::F32 && elem_type != GgufType::F64)) return out;
  Cursor c(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  out.reserve(plausible_count(*this));
  for (uint64_t k = 0; k < count; ++k)
    out.push_back(elem_type == GgufType::F32 ? c.read<float>("array element") : c.read<double>("array element"));
  return out;
}

std::unique_ptr<GgufFile> GgufFile::open(const std::string& path) {
  auto map = std::make_unique<MappedFile>(path);
  std::unique_ptr<GgufFile> f(new GgufFile());
  try {
    f->parse_image(map->data(), map->size());
  } catch (const Error& e) {
    throw Error(path + ": " + e.what());
  }
  f->map_ = std::move(map);
  return f;
}

std::unique_ptr<GgufFile> GgufFile::parse(const uint8_t* bytes, size_t size) {
  std::unique_ptr<GgufFile> f(new GgufFile());
  f->parse_image(bytes, size);
  return f;
}

void GgufFile::parse_image(const uint8_t* bytes, size_t size) {
  size_ = size;
  Cursor c(bytes, size);
  if (size < 4 || std::memcmp(bytes, "GGUF", 4) != 0) fail("not a GGUF file (bad magic)");
  c.read<uint32_t>("magic");
  version_ = c.read<uint32_t>("version");
  if (version_ != 2 && version_ != 3)
    fail("unsupported version " + std::to_string(version_) + " (supported: 2, 3)");
  uint64_t n_tensors = c.read<uint64_t>("tensor count");
  uint64_t n_kv = c.read<uint64_t>("metadata count");
  // Each kv needs at least 8 (key length) + 4 (type) + 1 bytes; each tensor info at least 8+4+8+4+8.
  if (n_kv > c.remaining() / 13) fail("metadata count " + std::to_string(n_kv) + " exceeds what the file can hold");
  if (n_kv > kMaxMetadataValues) fail("metadata count " + std::to_string(n_kv) + " exceeds the limit of " + std::to_string(kMaxMetadataValues));
  uint64_t value_budget = kMaxMetadataValues - n_kv;
  if (n_tensors > c.remaining() / 32) fail("tensor count " + std::to_string(n_tensors) + " exceeds what the file can hold");

  for (uint64_t k = 0; k < n_kv; ++k) {
    std::string key(c.read_string("metadata key"));
    uint32_t t = c.read<uint32_t>("metadata type");
    if (!valid_type(t)) fail("key '" + key + "': unknown value type " + std::to_string(t));
    GgufValue v = read_value(c, static_cast<GgufType>(t), key, 0, value_budget);
    if (!kv_.emplace(key, std::move(v)).second) fail("duplicate metadata key '" + key + "'");
  }

  if (const GgufValue* a = find("general.alignment")) {
    auto n = a->as_int();
    if (!a->is_integer() || !n || *n <= 0 || (*n & (*n - 1)) != 0 || *n > (1 << 20))
      fail("general.alignment must be a power of two between 1 and 2^20");
    alignment_ = static_cast<uint64_t>(*n);
  }

  tensors_.reserve(n_tensors);
  for (uint64_t k = 0; k < n_tensors; ++k) {
    GgufTensor t;
    t.name = std::string(c.read_string("tensor name"));
    uint32_t n_dims = c.read<uint32_t>("tensor dims");
    if (n_dims == 0 || n_dims > kMaxDims)
      fail("tensor '" + t.name + "' has " + std::to_string(n_dims) + " dimensions (1 to 4 allowed)");
    uint64_t n = 1;
    for (uint32_t d = 0; d < n_dims; ++d) {
      uint64_t dim = c.read<uint64_t>("tensor dim");
      if (dim == 0 || dim > static_cast<uint64_t>(INT64_MAX) || __builtin_mul_overflow(n, dim, &n) ||
          n > static_cast<uint64_t>(INT64_MAX))
        fail("tensor '" + t.name + "': element count overflows or a dimension is zero");
      t.dims.push_back(static_cast<int64_t>(dim));
    }
    t.n_elements = n;
    uint32_t type_id = c.read<uint32_t>("tensor type");
    const auto packed_base = packed_base_type(type_id);
    const DTypeTraits* tr = packed_base ? &dtype_traits(*packed_base) : dtype_traits(type_id);
    if (!tr) fail("tensor '" + t.name + "' has unknown type id " + std::to_string(type_id));
    t.type = tr->type;
    t.packed = packed_base.has_value();
    if (t.dims[0] % tr->block_size != 0)
      fail("tensor '" + t.name + "': row length " + std::to_string(t.dims[0]) + " is not a multiple of the " +
           tr->name + " block size " + std::to_string(tr->block_size));
    if (t.packed && n_dims != 2) fail("packed tensor '" + t.name + "' is not a matrix (2 dimensions)");
    auto nbytes = t.packed ? packed_matrix_bytes(t.type, static_cast<uint64_t>(t.dims[1]), static_cast<uint64_t>(t.dims[0]))
                           : dtype_bytes(t.type, n);
    if (!nbytes) fail("tensor '" + t.name + "': byte size overflows");
    t.n_bytes = *nbytes;
    t.offset = c.read<uint64_t>("tensor offset");
    if (t.offset % alignment_ != 0)
      fail("tensor '" + t.name + "': offset " + std::to_string(t.offset) + " is not a multiple of the alignment " +
           std::to_string(alignment_));
    if (!tensor_index_.emplace(t.name, tensors_.size()).second) fail("duplicate tensor name '" + t.name + "'");
    tensors_.push_back(std::move(t));
  }

  uint64_t data_start = (c.pos() + alignment_ - 1) / alignment_ * alignment_;
  if (data_start > size && !tensors_.empty()) fail("tensor data section starts past the end of the file");
  for (auto& t : tensors_) {
    uint64_t begin, end;
    if (__builtin_add_overflow(data_start, t.offset, &begin) || __builtin_add_overflow(begin, t.n_bytes, &end) ||
        end > size)
      fail("tensor '" + t.name + "' data [" + std::to_string(t.offset) + ", " + std::to_string(t.offset) + "+" +
           std::to_string(t.n_bytes) + ") exceeds file size " + std::to_string(size));
    t.data = bytes + begin;
  }
  // Tensors must not overlap one another.
  std::vector<const GgufTensor*> by_offset;
  for (const auto& t : tensors_) by_offset.push_back(&t);
  std::sort(by_offset.begin(), by_offset.end(), [](auto* a, auto* b) { return a->offset < b->offset; });
  for (size_t k = 1; k < by_offset.size(); ++k)
    if (by_offset[k - 1]->offset + by_offset[k - 1]->n_bytes > by_offset[k]->offset)
      fail("tensors '" + by_offset[k - 1]->name + "' and '" + by_offset[k]->name + "' overlap");
}

const GgufValue* GgufFile::find(std::string_view key) const {
  auto it = kv_.find(key);
  return it == kv_.end() ? nullptr : &it->second;
}

const GgufTensor* GgufFile::find_tensor(std::string_view name) const {
  auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

namespace {
[[noreturn]] void wrong_type(std::string_view key, const GgufValue& v, const char* want) {
  fail("metadata '" + std::string(key) + "' has type " + gguf_type_name(v.type) + ", expected " + want);
}
}  // namespace

std::optional<int64_t> GgufFile::get_int(std::string_view key) const {
  const GgufValue* v = find(key);
  if (!v) return std::nullopt;
  auto n = v->as_int();
  if (!n) wrong_type(key, *v, "an integer");
  return n;
}

std::optional<double> GgufFile::get_float(std::string_view key) const {
  const GgufValue* v = find(key);
  if (!v) return std::nullopt;
  auto f = v->as_float();
  if (!f) wrong_type(key, *v, "a number");
  return f;
}

std::optional<std::string_view> GgufFile::get_string(std::string_view key) const {
  const GgufValue* v = find(key);
  if (!v) return std::nullopt;
  if (v->type != GgufType::STRING) wrong_type(key, *v, "string");
  return v->str;
}

std::optional<bool> GgufFile::get_bool(std::string_view key) const {
  const GgufValue* v = find(key);
  if (!v) return std::nullopt;
  if (v->type != GgufType::BOOL) wrong_type(key, *v, "bool");
  return v->u != 0;
}

const GgufValue* GgufFile::get_array(std::string_view key, GgufType elem) const {
  const GgufValue* v = find(key);
  if (!v) return nullptr;
  if (v->type != GgufType::ARRAY) wrong_type(key, *v, "array");
  if (v->elem_type != elem)
    fail("metadata '" + std::string(key) + "' is an array of " + gguf_type_name(v->elem_type) + ", expected " +
         gguf_type_name(elem));
  return v;
}

}  // namespace minnow
