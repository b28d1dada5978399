#include "formats/gguf_writer.hpp"

#include <cerrno>
#include <cstring>
#include <limits>

#include "base/error.hpp"
#include "tensor/packed_types.hpp"

namespace minnow {
namespace {

constexpr uint32_t kVersion = 3;
constexpr uint32_t kDefaultAlignment = 32;

[[noreturn]] void fail(const std::string& msg) { throw Error("gguf writer: " + msg); }

template <typename T>
void put(std::vector<uint8_t>& out, T v) {
  const size_t at = out.size();
  out.resize(at + sizeof(T));
  std::memcpy(out.data() + at, &v, sizeof(T));
}

void put_string(std::vector<uint8_t>& out, std::string_view s) {
  put<uint64_t>(out, s.size());
  out.insert(out.end(), s.begin(), s.end());
}

// One value's bytes without its type tag (the caller writes the tag where GGUF wants one).
void put_value(std::vector<uint8_t>& out, const GgufValue& v, const std::string& key) {
  switch (v.type) {
    case GgufType::U8: put<uint8_t>(out, static_cast<uint8_t>(v.u)); break;
    case GgufType::I8: put<int8_t>(out, static_cast<int8_t>(v.i)); break;
    case GgufType::U16: put<uint16_t>(out, static_cast<uint16_t>(v.u)); break;
    case GgufType::I16: put<int16_t>(out, static_cast<int16_t>(v.i)); break;
    case GgufType::U32: put<uint32_t>(out, static_cast<uint32_t>(v.u)); break;
    case GgufType::I32: put<int32_t>(out, static_cast<int32_t>(v.i)); break;
    case GgufType::U64: put<uint64_t>(out, v.u); break;
    case GgufType::I64: put<int64_t>(out, v.i); break;
    case GgufType::F32: put<float>(out, static_cast<float>(v.f)); break;  // read from f32: exact
    case GgufType::F64: put<double>(out, v.f); break;
    case GgufType::BOOL: put<uint8_t>(out, v.u ? 1 : 0); break;
    case GgufType::STRING: put_string(out, v.str); break;
    case GgufType::ARRAY:
      put<uint32_t>(out, static_cast<uint32_t>(v.elem_type));
      put<uint64_t>(out, v.count);
      out.insert(out.end(), v.bytes.begin(), v.bytes.end());  // encoded as the source file has them
      break;
    default: fail("metadata '" + key + "' has an unknown type");
  }
}

uint64_t align_up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

}  // namespace

GgufWriter::GgufWriter(std::string path) : path_(std::move(path)), tmp_path_(path_ + ".tmp") {}

GgufWriter::~GgufWriter() {
  if (file_) std::fclose(file_);
  if (created_ && !finished_) std::remove(tmp_path_.c_str());
}

std::vector<uint8_t>& GgufWriter::slot(std::string_view key, GgufType type) {
  if (file_) fail("metadata '" + std::string(key) + "' set after the header was written");
  std::vector<uint8_t>* bytes = nullptr;
  for (auto& [k, v] : kv_)
    if (k == key) bytes = &v;
  if (!bytes) bytes = &kv_.emplace_back(std::string(key), std::vector<uint8_t>()).second;
  bytes->clear();
  put<uint32_t>(*bytes, static_cast<uint32_t>(type));
  return *bytes;
}

void GgufWriter::set_u8(std::string_view k, uint8_t v) { put(slot(k, GgufType::U8), v); }
void GgufWriter::set_i8(std::string_view k, int8_t v) { put(slot(k, GgufType::I8), v); }
void GgufWriter::set_u16(std::string_view k, uint16_t v) { put(slot(k, GgufType::U16), v); }
void GgufWriter::set_i16(std::string_view k, int16_t v) { put(slot(k, GgufType::I16), v); }
void GgufWriter::set_u32(std::string_view k, uint32_t v) { put(slot(k, GgufType::U32), v); }
void GgufWriter::set_i32(std::string_view k, int32_t v) { put(slot(k, GgufType::I32), v); }
void GgufWriter::set_u64(std::string_view k, uint64_t v) { put(slot(k, GgufType::U64), v); }
void GgufWriter::set_i64(std::string_view k, int64_t v) { put(slot(k, GgufType::I64), v); }
void GgufWriter::set_f32(std::string_view k, float v) { put(slot(k, GgufType::F32), v); }
void GgufWriter::set_f64(std::string_view k, double v) { put(slot(k, GgufType::F64), v); }
void GgufWriter::set_bool(std::string_view k, bool v) { put<uint8_t>(slot(k, GgufType::BOOL), v ? 1 : 0); }
void GgufWriter::set_string(std::string_view k, std::string_view v) { put_string(slot(k, GgufType::STRING), v); }

void GgufWriter::set_strings(std::string_view k, std::span<const std::string> v) {
  auto& out = slot(k, GgufType::ARRAY);
  put<uint32_t>(out, static_cast<uint32_t>(GgufType::STRING));
  put<uint64_t>(out, v.size());
  for (const auto& s : v) put_string(out, s);
}

void GgufWriter::set_i32s(std::string_view k, std::span<const int32_t> v) {
  auto& out = slot(k, GgufType::ARRAY);
  put<uint32_t>(out, static_cast<uint32_t>(GgufType::I32));
  put<uint64_t>(out, v.size());
  for (int32_t x : v) put(out, x);
}

void GgufWriter::set_f32s(std::string_view k, std::span<const float> v) {
  auto& out = slot(k, GgufType::ARRAY);
  put<uint32_t>(out, static_cast<uint32_t>(GgufType::F32));
  put<uint64_t>(out, v.size());
  for (float x : v) put(out, x);
}

void GgufWriter::set_value(std::string_view k, const GgufValue& v) {
  const std::string key(k);
  auto& out = slot(k, v.type);
  put_value(out, v, key);
  if (k == "general.alignment") {
    auto a = v.as_int();
    if (!a || *a <= 0 || *a > (1 << 30) || (*a & (*a - 1))) fail("general.alignment must be a power of two");
    alignment_ = static_cast<uint32_t>(*a);
  }
}

bool GgufWriter::has(std::string_view key) const {
  for (const auto& kv : kv_)
    if (kv.first == key) return true;
  return false;
}

void GgufWriter::remove(std::string_view key) {
  std::erase_if(kv_, [&](const auto& kv) { return kv.first == key; });
  if (key == "general.alignment") alignment_ = kDefaultAlignment;
}

void GgufWriter::set_alignment(uint32_t a) {
  if (a == 0 || (a & (a - 1)) || a > (1u << 30)) fail("alignment " + std::to_string(a) + " is not a power of two");
  alignment_ = a;
  if (a == kDefaultAlignment) remove("general.alignment");
  else set_u32("general.alignment", a);
  alignment_ = a;
}

size_t GgufWriter::add_tensor(std::string name, std::vector<int64_t> dims, DType type) {
  if (file_) fail("tensor '" + name + "' added after the header was written");
  if (dims.empty() || dims.size() > 4) fail("tensor '" + name + "' must have 1 to 4 dimensions");
  uint64_t n = 1;
  for (int64_t d : dims) {
    if (d <= 0) fail("tensor '" + name + "' has a dimension <= 0");
    if (n > std::numeric_limits<uint64_t>::max() / static_cast<uint64_t>(d)) fail("tensor '" + name + "' is too large");
    n *= static_cast<uint64_t>(d);
  }
  if (dims[0] % dtype_traits(type).block_size != 0)
    fail("tensor '" + name + "': row length " + std::to_string(dims[0]) + " is not a multiple of " + dtype_name(type) +
         "'s block of " + std::to_string(dtype_traits(type).block_size));
  for (const auto& t : tensors_)
    if (t.name == name) fail("tensor '" + name + "' added twice");
  TensorInfo t{std::move(name), std::move(dims), static_cast<uint32_t>(type)};
  t.n_bytes = *dtype_bytes(type, n);
  return place(std::move(t));
}

size_t GgufWriter::add_packed_tensor(std::string name, std::vector<int64_t> dims, DType type) {
  if (!packed_base_type(packed_type_id(type))) fail("tensor '" + name + "': " + dtype_name(type) + " has no packed layout");
  if (dims.size() != 2) fail("packed tensor '" + name + "' must be a matrix (2 dimensions)");
  const size_t i = add_tensor(std::move(name), std::move(dims), type);  // the checks of a plain tensor
  TensorInfo t = std::move(tensors_.back());
  tensors_.pop_back();
  data_size_ = t.offset;  // add_tensor's placement, undone
  const auto bytes = packed_matrix_bytes(type, static_cast<uint64_t>(t.dims[1]), static_cast<uint64_t>(t.dims[0]));
  if (!bytes) fail("packed tensor '" + t.name + "' is too large");
  t.type_id = packed_type_id(type);
  t.n_bytes = *bytes;
  if (place(std::move(t)) != i) fail("internal: packed tensor misplaced");
  return i;
}

size_t GgufWriter::place(TensorInfo t) {
  t.offset = align_up(data_size_, alignment_);
  data_size_ = align_up(t.offset + t.n_bytes, alignment_);
  tensors_.push_back(std::move(t));
  return tensors_.size() - 1;
}

void GgufWriter::fail_io(const std::string& what) {
  const int err = errno;
  fail(what + " '" + tmp_path_ + "': " + (err ? std::strerror(err) : "I/O error"));
}

void GgufWriter::write(const void* p, size_t n) {
  errno = 0;
  if (n && std::fwrite(p, 1, n, file_) != n) fail_io("cannot write");
  written_ += n;
}

void GgufWriter::pad_to(uint64_t alignment) {
  static const uint8_t zeros[64] = {};
  uint64_t n = align_up(written_, alignment) - written_;
  while (n) {
    const size_t k = static_cast<size_t>(std::min<uint64_t>(n, sizeof zeros));
    write(zeros, k);
    n -= k;
  }
}

void GgufWriter::begin_data() {
  if (file_ || finished_) fail("begin_data called twice");
  // Offsets were computed with the alignment in force when each tensor was added.
  uint64_t off = 0;
  for (auto& t : tensors_) {
    if (t.offset != align_up(off, alignment_)) fail("the alignment changed after tensors were added");
    off = align_up(t.offset + t.n_bytes, alignment_);
  }
  errno = 0;
  file_ = std::fopen(tmp_path_.c_str(), "wb");
  if (!file_) fail_io("cannot create");
  created_ = true;
  std::setvbuf(file_, nullptr, _IOFBF, 1 << 20);
  std::vector<uint8_t> head;
  head.insert(head.end(), {'G', 'G', 'U', 'F'});
  put<uint32_t>(head, kVersion);
  put<uint64_t>(head, tensors_.size());
  put<uint64_t>(head, kv_.size());
  for (const auto& [key, value] : kv_) {
    put_string(head, key);
    head.insert(head.end(), value.begin(), value.end());
  }
  for (const auto& t : tensors_) {
    put_string(head, t.name);
    put<uint32_t>(head, static_cast<uint32_t>(t.dims.size()));
    for (int64_t d : t.dims) put<uint64_t>(head, static_cast<uint64_t>(d));
    put<uint32_t>(head, t.type_id);
    put<uint64_t>(head, t.offset);
  }
  write(head.data(), head.size());
  pad_to(alignment_);
  data_start_ = written_;
  current_ = 0;
  current_done_ = 0;
}

void GgufWriter::write_tensor_data(const void* data, size_t n) {
  if (!file_) fail("tensor data written before begin_data");
  while (current_ < tensors_.size() && current_done_ == tensors_[current_].n_bytes && n) {
    ++current_, current_done_ = 0;
  }
  if (current_ >= tensors_.size()) fail("more tensor data than the tensors hold");
  const TensorInfo& t = tensors_[current_];
  if (current_done_ == 0) pad_to(alignment_);
  if (written_ - data_start_ != t.offset + current_done_) fail("internal: tensor '" + t.name + "' is misplaced");
  if (n > t.n_bytes - current_done_)
    fail("tensor '" + t.name + "' got " + std::to_string(current_done_ + n) + " bytes, expected " + std::to_string(t.n_bytes));
  write(data, n);
  current_done_ += n;
}

void GgufWriter::finish() {
  if (!file_) begin_data();  // a file of metadata only
  if (!tensors_.empty()) {
    const TensorInfo& last = tensors_[current_];
    if (current_ + 1 < tensors_.size() || current_done_ != last.n_bytes)
      fail("tensor '" + last.name + "' got " + std::to_string(current_done_) + " of its " + std::to_string(last.n_bytes) +
           " bytes" + (current_ + 1 < tensors_.size() ? " and " + std::to_string(tensors_.size() - current_ - 1) + " more got none" : ""));
  }
  pad_to(alignment_);
  errno = 0;
  if (std::fflush(file_) != 0) fail_io("cannot write");
  std::FILE* f = file_;
  file_ = nullptr;
  errno = 0;
  if (std::fclose(f) != 0) fail_io("cannot close");
  errno = 0;
  if (std::rename(tmp_path_.c_str(), path_.c_str()) != 0) {
    const int err = errno;
    fail("cannot rename '" + tmp_path_ + "' to '" + path_ + "': " + std::strerror(err));
  }
  finished_ = true;
}

}  // namespace minnow
