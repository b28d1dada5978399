// GGUF reader: a hand-built well-formed file parses to the right values, and malformed files
// (each broken in one specific way, every truncation, random mutations) are rejected with
// minnow::Error and never crash. Every parse runs on an exactly-sized heap copy so that ASan
// would report any read past the end of the image.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <unistd.h>

#include "base/error.hpp"
#include "formats/gguf.hpp"

using namespace minnow;
using namespace std::literals;

namespace {

constexpr uint32_t kF32 = 0;   // ggml type ids
constexpr uint32_t kQ8_0 = 8;
constexpr uint64_t kMax64 = ~uint64_t{0};

void put_u64(std::vector<uint8_t>& b, size_t at, uint64_t v) {
  for (int k = 0; k < 8; ++k) b[at + k] = static_cast<uint8_t>(v >> (8 * k));
}

// Appends little-endian GGUF fields; just enough to hand-craft valid and broken files.
class GgufBuilder {
 public:
  GgufBuilder& u8(uint8_t v) { return le(v, 1); }
  GgufBuilder& u16(uint16_t v) { return le(v, 2); }
  GgufBuilder& u32(uint32_t v) { return le(v, 4); }
  GgufBuilder& u64(uint64_t v) { return le(v, 8); }
  GgufBuilder& i8(int8_t v) { return le(static_cast<uint8_t>(v), 1); }
  GgufBuilder& i16(int16_t v) { return le(static_cast<uint16_t>(v), 2); }
  GgufBuilder& i32(int32_t v) { return le(static_cast<uint32_t>(v), 4); }
  GgufBuilder& i64(int64_t v) { return le(static_cast<uint64_t>(v), 8); }
  GgufBuilder& f32(float v) { return u32(std::bit_cast<uint32_t>(v)); }
  GgufBuilder& f64(double v) { return u64(std::bit_cast<uint64_t>(v)); }
  GgufBuilder& raw(std::string_view s) {
    b_.insert(b_.end(), s.begin(), s.end());
    return *this;
  }
  GgufBuilder& str(std::string_view s) { return u64(s.size()).raw(s); }

  GgufBuilder& header(uint32_t version, uint64_t n_tensors, uint64_t n_kv) {
    return raw("GGUF").u32(version).u64(n_tensors).u64(n_kv);
  }
  // Key and value type of one metadata pair; the caller appends the value.
  GgufBuilder& key(std::string_view k, GgufType t) { return str(k).u32(static_cast<uint32_t>(t)); }
  GgufBuilder& key(std::string_view k, uint32_t raw_type) { return str(k).u32(raw_type); }
  GgufBuilder& array_head(GgufType elem, uint64_t count) { return u32(static_cast<uint32_t>(elem)).u64(count); }
  GgufBuilder& tensor(std::string_view name, const std::vector<uint64_t>& dims, uint32_t type, uint64_t offset) {
    str(name).u32(static_cast<uint32_t>(dims.size()));
    for (uint64_t d : dims) u64(d);
    return u32(type).u64(offset);
  }
  // Pads with zeros up to a multiple of `alignment` (the data section start) and returns it.
  size_t pad(size_t alignment) {
    while (b_.size() % alignment) b_.push_back(0);
    return b_.size();
  }
  // n bytes of a position-dependent pattern, so data pointers can be checked by content.
  GgufBuilder& fill(size_t n) {
    for (size_t k = 0; k < n; ++k) b_.push_back(static_cast<uint8_t>(b_.size() * 7 + 1));
    return *this;
  }
  void patch_u64(size_t at, uint64_t v) { put_u64(b_, at, v); }

  size_t size() const { return b_.size(); }
  const std::vector<uint8_t>& bytes() const { return b_; }

 private:
  GgufBuilder& le(uint64_t v, int n) {
    for (int k = 0; k < n; ++k) b_.push_back(static_cast<uint8_t>(v >> (8 * k)));
    return *this;
  }
  std::vector<uint8_t> b_;
};

// Exactly-sized heap copy: any read past the end lands in ASan's redzone.
struct Image {
  explicit Image(const std::vector<uint8_t>& v, size_t n) : size(n), buf(new uint8_t[n]) {
    if (n) std::memcpy(buf.get(), v.data(), n);
  }
  explicit Image(const std::vector<uint8_t>& v) : Image(v, v.size()) {}
  std::unique_ptr<GgufFile> parse() const { return GgufFile::parse(buf.get(), size); }
  size_t size;
  std::unique_ptr<uint8_t[]> buf;
};

// Parse must fail with minnow::Error "gguf: ..." mentioning every needle.
::testing::AssertionResult Rejects(const std::vector<uint8_t>& bytes, std::initializer_list<std::string_view> needles,
                                   size_t size = SIZE_MAX) {
  Image img(bytes, std::min(size, bytes.size()));
  try {
    img.parse();
  } catch (const Error& e) {
    std::string_view msg = e.what();
    if (!msg.starts_with("gguf: ")) return ::testing::AssertionFailure() << "message lacks 'gguf: ': " << msg;
    for (std::string_view n : needles)
      if (msg.find(n) == std::string_view::npos)
        return ::testing::AssertionFailure() << "message lacks '" << n << "': " << msg;
    return ::testing::AssertionSuccess() << msg;
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "threw a non-minnow exception: " << e.what();
  }
  return ::testing::AssertionFailure() << "parsed without error";
}

::testing::AssertionResult Parses(const std::vector<uint8_t>& bytes) {
  try {
    Image(bytes).parse();
    return ::testing::AssertionSuccess();
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << e.what();
  }
}

struct ValidFile {
  std::vector<uint8_t> bytes;
  size_t infos_end = 0;   // end of the tensor infos
  size_t data_start = 0;  // aligned start of the data section
};

// Every value type (including a nested array and strings) and three tensors, general.alignment 64.
ValidFile make_valid(uint32_t version = 3) {
  GgufBuilder b;
  b.header(version, 3, 17);
  b.key("general.architecture", GgufType::STRING).str("llama");
  b.key("general.alignment", GgufType::U32).u32(64);
  b.key("t.u8", GgufType::U8).u8(200);
  b.key("t.i8", GgufType::I8).i8(-5);
  b.key("t.u16", GgufType::U16).u16(65000);
  b.key("t.i16", GgufType::I16).i16(-30000);
  b.key("t.u32", GgufType::U32).u32(4000000000u);
  b.key("t.i32", GgufType::I32).i32(-123456);
  b.key("t.f32", GgufType::F32).f32(1.5f);
  b.key("t.bool", GgufType::BOOL).u8(1);
  b.key("t.u64", GgufType::U64).u64(uint64_t{1} << 40);
  b.key("t.i64", GgufType::I64).i64(-(int64_t{1} << 40));
  b.key("t.f64", GgufType::F64).f64(2.25);
  b.key("t.empty_str", GgufType::STRING).str("");
  b.key("t.strings", GgufType::ARRAY).array_head(GgufType::STRING, 3).str("a").str("bc").str("");
  // [[1, 2], ["x"], []]: inner arrays may differ in element type.
  b.key("t.nested", GgufType::ARRAY).array_head(GgufType::ARRAY, 3);
  b.array_head(GgufType::I32, 2).i32(1).i32(2);
  b.array_head(GgufType::STRING, 1).str("x");
  b.array_head(GgufType::F32, 0);
  b.key("t.empty_arr", GgufType::ARRAY).array_head(GgufType::U8, 0);
  b.tensor("tok_embd", {4, 3}, kF32, 0);       // 48 bytes at 0
  b.tensor("blk.0.w", {64, 2}, kQ8_0, 64);     // 4 blocks * 34 = 136 bytes at 64
  b.tensor("output_norm", {8}, kF32, 256);     // 32 bytes at 256 (64 + 136 rounded up to 64)
  ValidFile v;
  v.infos_end = b.size();
  v.data_start = b.pad(64);
  b.fill(256 + 32);  // the file ends exactly where the last tensor does
  v.bytes = b.bytes();
  return v;
}

// Header with no metadata and one tensor of `data_bytes` bytes of data after alignment 32.
std::vector<uint8_t> one_tensor(const std::vector<uint64_t>& dims, uint32_t type, uint64_t offset,
                                size_t data_bytes, std::string_view name = "w") {
  GgufBuilder b;
  b.header(3, 1, 0).tensor(name, dims, type, offset);
  b.pad(32);
  b.fill(data_bytes);
  return b.bytes();
}

// A file whose only metadata value is `general.alignment` (type and value written by `put`),
// then a 64-byte tensor at `offset` and enough data for any alignment up to 128.
template <typename Put>
std::vector<uint8_t> with_alignment(Put put, uint64_t offset = 0, size_t* infos_end = nullptr) {
  GgufBuilder b;
  b.header(3, 1, 1);
  put(b.str("general.alignment"));
  b.tensor("w", {16}, kF32, offset);
  if (infos_end) *infos_end = b.size();
  b.fill(512);
  return b.bytes();
}

}  // namespace

// ---------------------------------------------------------------- well-formed files

TEST(Gguf, ParsesWellFormedFile) {
  ValidFile v = make_valid();
  Image img(v.bytes);
  auto f = img.parse();
  EXPECT_EQ(f->version(), 3u);
  EXPECT_EQ(f->alignment(), 64u);
  EXPECT_EQ(f->file_size(), v.bytes.size());
  EXPECT_EQ(f->metadata().size(), 17u);

  EXPECT_EQ(f->get_string("general.architecture"), "llama");
  EXPECT_EQ(f->get_int("t.u8"), 200);
  EXPECT_EQ(f->get_int("t.i8"), -5);
  EXPECT_EQ(f->get_int("t.u16"), 65000);
  EXPECT_EQ(f->get_int("t.i16"), -30000);
  EXPECT_EQ(f->get_int("t.u32"), 4000000000LL);
  EXPECT_EQ(f->get_int("t.i32"), -123456);
  EXPECT_EQ(f->get_float("t.f32"), 1.5);
  EXPECT_EQ(f->get_bool("t.bool"), true);
  EXPECT_EQ(f->get_int("t.u64"), int64_t{1} << 40);
  EXPECT_EQ(f->get_int("t.i64"), -(int64_t{1} << 40));
  EXPECT_EQ(f->get_float("t.f64"), 2.25);
  EXPECT_EQ(f->get_float("t.i32"), -123456.0);  // integers widen to float
  EXPECT_EQ(f->get_string("t.empty_str"), "");
  EXPECT_EQ(f->find("t.u8")->type, GgufType::U8);
  EXPECT_EQ(f->find("t.i64")->type, GgufType::I64);
  EXPECT_EQ(f->find("missing"), nullptr);
  EXPECT_EQ(f->get_int("missing"), std::nullopt);
  EXPECT_EQ(f->get_array("missing", GgufType::U8), nullptr);

  auto* strs = f->get_array("t.strings", GgufType::STRING);
  ASSERT_NE(strs, nullptr);
  ASSERT_EQ(strs->count, 3u);
  const auto sv = strs->strings();
  EXPECT_EQ(sv, (std::vector<std::string_view>{"a", "bc", ""}));
  EXPECT_EQ(strs->elements().at(1).str, "bc");
  EXPECT_TRUE(strs->ints().empty());  // not integers
  // Strings point into the image rather than being copied.
  EXPECT_GE(reinterpret_cast<const uint8_t*>(sv[1].data()), img.buf.get());
  EXPECT_LT(reinterpret_cast<const uint8_t*>(sv[1].data()), img.buf.get() + img.size);

  auto* nested_value = f->get_array("t.nested", GgufType::ARRAY);
  ASSERT_NE(nested_value, nullptr);
  const auto nested = nested_value->elements();
  ASSERT_EQ(nested.size(), 3u);
  EXPECT_EQ(nested[0].elem_type, GgufType::I32);
  EXPECT_EQ(nested[0].ints(), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(nested[1].elem_type, GgufType::STRING);
  EXPECT_EQ(nested[1].strings(), (std::vector<std::string_view>{"x"}));
  EXPECT_EQ(nested[2].elem_type, GgufType::F32);
  EXPECT_EQ(nested[2].count, 0u);
  EXPECT_TRUE(nested[2].floats().empty());
  auto* empty = f->get_array("t.empty_arr", GgufType::U8);
  ASSERT_NE(empty, nullptr);
  EXPECT_EQ(empty->count, 0u);
  EXPECT_TRUE(empty->elements().empty());

  // Tensors keep file order; data = base + aligned data start + offset.
  const uint8_t* base = img.buf.get();
  ASSERT_EQ(v.data_start % 64, 0u);
  ASSERT_EQ(f->tensors().size(), 3u);
  const GgufTensor& t0 = f->tensors()[0];
  EXPECT_EQ(t0.name, "tok_embd");
  EXPECT_EQ(t0.dims, (std::vector<int64_t>{4, 3}));
  EXPECT_EQ(t0.type, DType::F32);
  EXPECT_EQ(t0.offset, 0u);
  EXPECT_EQ(t0.n_elements, 12u);
  EXPECT_EQ(t0.n_bytes, 48u);
  EXPECT_EQ(t0.data, base + v.data_start);
  const GgufTensor& t1 = f->tensors()[1];
  EXPECT_EQ(t1.name, "blk.0.w");
  EXPECT_EQ(t1.dims, (std::vector<int64_t>{64, 2}));
  EXPECT_EQ(t1.type, DType::Q8_0);
  EXPECT_EQ(t1.n_elements, 128u);
  EXPECT_EQ(t1.n_bytes, 4u * 34u);
  EXPECT_EQ(t1.data, base + v.data_start + 64);
  const GgufTensor& t2 = f->tensors()[2];
  EXPECT_EQ(t2.name, "output_norm");
  EXPECT_EQ(t2.dims, (std::vector<int64_t>{8}));
  EXPECT_EQ(t2.n_bytes, 32u);
  EXPECT_EQ(t2.data, base + v.data_start + 256);
  EXPECT_EQ(t2.data + t2.n_bytes, base + img.size);
  EXPECT_EQ(f->find_tensor("blk.0.w"), &t1);
  EXPECT_EQ(f->find_tensor("nope"), nullptr);
  // The data pointer sees the bytes written at that file position.
  EXPECT_EQ(t1.data[5], static_cast<uint8_t>((v.data_start + 64 + 5) * 7 + 1));
}

TEST(Gguf, AcceptsVersions2And3) {
  for (uint32_t ver : {2u, 3u}) {
    auto v = make_valid(ver);
    auto f = Image(v.bytes).parse();
    EXPECT_EQ(f->version(), ver);
    EXPECT_EQ(f->tensors().size(), 3u);
  }
}

TEST(Gguf, DefaultAlignmentIs32) {
  GgufBuilder b;
  b.header(3, 2, 0).tensor("a", {8}, kF32, 0).tensor("b", {8}, kF32, 32);
  size_t data_start = b.pad(32);
  ASSERT_NE(data_start % 64, 0u);  // would differ under a 64-byte alignment
  b.fill(64);
  Image img(b.bytes());
  auto f = img.parse();
  EXPECT_EQ(f->alignment(), 32u);
  EXPECT_EQ(f->tensors()[0].data, img.buf.get() + data_start);
  EXPECT_EQ(f->tensors()[1].data, img.buf.get() + data_start + 32);
}

TEST(Gguf, HonoursGeneralAlignment) {
  // Alignment 128: offset 128 is fine, data starts on a 128-byte boundary.
  size_t infos_end = 0;
  auto ok = with_alignment([](GgufBuilder& b) { b.u32(static_cast<uint32_t>(GgufType::U32)).u32(128); }, 128,
                           &infos_end);
  ASSERT_NE((infos_end + 31) / 32 * 32, (infos_end + 127) / 128 * 128);  // 32 and 128 would differ
  Image img(ok);
  auto f = img.parse();
  EXPECT_EQ(f->alignment(), 128u);
  EXPECT_EQ(f->tensors()[0].data, img.buf.get() + (infos_end + 127) / 128 * 128 + 128);
  // Offset 64 is aligned to the default 32 but not to 128.
  EXPECT_TRUE(Rejects(with_alignment([](GgufBuilder& b) { b.u32(static_cast<uint32_t>(GgufType::U32)).u32(128); }, 64),
                      {"'w'", "alignment 128"}));
  // Any integer type is accepted for the key.
  EXPECT_TRUE(Parses(with_alignment([](GgufBuilder& b) { b.u32(static_cast<uint32_t>(GgufType::U64)).u64(16); })));
  EXPECT_TRUE(Parses(with_alignment([](GgufBuilder& b) { b.u32(static_cast<uint32_t>(GgufType::I32)).i32(8); })));
  EXPECT_TRUE(Parses(with_alignment([](GgufBuilder& b) { b.u32(static_cast<uint32_t>(GgufType::U8)).u8(1); })));
}

TEST(Gguf, OpenMapsFileAndNamesPathInErrors) {
  std::string path = ::testing::TempDir() + "minnow_gguf_test_" + std::to_string(::getpid()) + ".gguf";
  auto write = [&](const std::vector<uint8_t>& bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  };
  auto v = make_valid();
  write(v.bytes);
  {
    auto f = GgufFile::open(path);
    EXPECT_EQ(f->tensors().size(), 3u);
    EXPECT_EQ(f->get_string("general.architecture"), "llama");
    EXPECT_EQ(f->file_size(), v.bytes.size());
  }
  write(std::vector<uint8_t>(v.bytes.begin(), v.bytes.end() - 1));
  try {
    GgufFile::open(path);
    ADD_FAILURE() << "truncated file opened";
  } catch (const Error& e) {
    EXPECT_NE(std::string_view(e.what()).find(path), std::string_view::npos) << e.what();
    EXPECT_NE(std::string_view(e.what()).find("output_norm"), std::string_view::npos) << e.what();
  }
  write({});  // empty file: nothing to map
  EXPECT_THROW(GgufFile::open(path), Error);
  std::remove(path.c_str());
  EXPECT_THROW(GgufFile::open(path), Error);
}

// ---------------------------------------------------------------- header

TEST(GgufMalformed, BadMagic) {
  auto v = make_valid().bytes;
  for (std::string_view magic : {"GGUG"sv, "FUGG"sv, "ggml"sv, "\0\0\0\0"sv}) {
    std::memcpy(v.data(), magic.data(), 4);
    EXPECT_TRUE(Rejects(v, {"bad magic"}));
  }
  EXPECT_TRUE(Rejects({}, {"bad magic"}));
  EXPECT_TRUE(Rejects({'G', 'G', 'U'}, {"bad magic"}));
}

TEST(GgufMalformed, UnsupportedVersion) {
  for (uint32_t ver : {0u, 1u, 4u, 0xffffffffu}) {
    auto v = make_valid(ver).bytes;
    EXPECT_TRUE(Rejects(v, {"unsupported version " + std::to_string(ver)}));
  }
}

TEST(GgufMalformed, EveryTruncationThrows) {
  ValidFile v = make_valid();
  for (size_t n = 0; n < v.bytes.size(); ++n) {
    SCOPED_TRACE("prefix of " + std::to_string(n) + " bytes");
    if (n < 4)
      EXPECT_TRUE(Rejects(v.bytes, {"bad magic"}, n));
    else if (n < 24)
      EXPECT_TRUE(Rejects(v.bytes, {"truncated"}, n));
    else if (n >= v.infos_end)  // all tensor infos read: the data is what is missing
      EXPECT_TRUE(Rejects(v.bytes, {"past the end"}, n) || Rejects(v.bytes, {"exceeds file size"}, n));
    else
      EXPECT_TRUE(Rejects(v.bytes, {}, n));  // various messages: counts, lengths, truncation
  }
}

TEST(GgufMalformed, AbsurdCounts) {
  for (uint64_t n : {uint64_t{1} << 62, kMax64, uint64_t{1000}}) {
    EXPECT_TRUE(Rejects(GgufBuilder().header(3, n, 0).bytes(), {"tensor count"}));
    EXPECT_TRUE(Rejects(GgufBuilder().header(3, 0, n).bytes(), {"metadata count"}));
  }
  // A count just past what the rest of the file holds, with a valid file following.
  auto v = make_valid().bytes;
  put_u64(v, 16, 1u << 30);
  EXPECT_TRUE(Rejects(v, {"metadata count"}));
  v = make_valid().bytes;
  put_u64(v, 8, 1u << 30);
  EXPECT_TRUE(Rejects(v, {"tensor count"}));
}

// ---------------------------------------------------------------- metadata

TEST(GgufMalformed, StringLengthOverflow) {
  // Key length near 2^64.
  for (uint64_t len : {kMax64, kMax64 - 7, uint64_t{1} << 63}) {
    GgufBuilder b;
    b.header(3, 0, 1).u64(len).raw("k").u32(static_cast<uint32_t>(GgufType::U8)).u8(0);
    EXPECT_TRUE(Rejects(b.bytes(), {"metadata key", "string length"}));
  }
  // Value length near 2^64 and one byte more than the file holds.
  for (uint64_t len : {kMax64, kMax64 - 7, uint64_t{6}}) {
    GgufBuilder b;
    b.header(3, 0, 1).key("k.str", GgufType::STRING).u64(len).raw("hello");
    EXPECT_TRUE(Rejects(b.bytes(), {"k.str", "string length"}));
  }
  // Inside an array.
  GgufBuilder b;
  b.header(3, 0, 1).key("k.arr", GgufType::ARRAY).array_head(GgufType::STRING, 2).str("ok").u64(kMax64 - 1);
  EXPECT_TRUE(Rejects(b.bytes(), {"k.arr", "string length"}));
}

TEST(GgufMalformed, AbsurdArrayCount) {
  for (GgufType elem : {GgufType::U8, GgufType::U64, GgufType::STRING, GgufType::ARRAY}) {
    for (uint64_t count : {uint64_t{1} << 62, kMax64, uint64_t{100}}) {
      GgufBuilder b;
      b.header(3, 0, 1).key("k.arr", GgufType::ARRAY).array_head(elem, count).u64(0);
      EXPECT_TRUE(Rejects(b.bytes(), {"k.arr", "array count"}));
    }
  }
  // An absurd count in an inner array.
  GgufBuilder b;
  b.header(3, 0, 1).key("k.nest", GgufType::ARRAY).array_head(GgufType::ARRAY, 1).array_head(GgufType::I32, kMax64);
  EXPECT_TRUE(Rejects(b.bytes(), {"k.nest", "array count"}));
}

TEST(GgufMalformed, TooManyMetadataValues) {
  // 2^22 + 1 u8 elements, all present: small on disk but 80 bytes each once parsed, so the
  // reader caps the total (a multi-GB file could otherwise demand hundreds of GB).
  const uint64_t count = (uint64_t{1} << 22) + 1;
  GgufBuilder b;
  b.header(3, 0, 1).key("k.big", GgufType::ARRAY).array_head(GgufType::U8, count).fill(count);
  EXPECT_TRUE(Rejects(b.bytes(), {"k.big", "exceeds the limit"}));
}

TEST(GgufMalformed, UnknownValueType) {
  for (uint32_t t : {13u, 100u, 0xffffffffu}) {
    GgufBuilder b;
    b.header(3, 0, 1).key("k.weird", t).u64(0);
    EXPECT_TRUE(Rejects(b.bytes(), {"k.weird", "unknown value type " + std::to_string(t)}));
  }
}

TEST(GgufMalformed, UnknownArrayElementType) {
  for (uint32_t t : {13u, 0xffffffffu}) {
    GgufBuilder b;
    b.header(3, 0, 1).key("k.arr", GgufType::ARRAY).u32(t).u64(1).u64(0);
    EXPECT_TRUE(Rejects(b.bytes(), {"k.arr", "unknown array element type"}));
  }
}

TEST(GgufMalformed, ArraysNestedTooDeep) {
  // `levels` arrays, each holding the next; the innermost holds one u8.
  auto nested = [](int levels) {
    GgufBuilder b;
    b.header(3, 0, 1).key("k.deep", GgufType::ARRAY);
    for (int d = 1; d < levels; ++d) b.array_head(GgufType::ARRAY, 1);
    b.array_head(GgufType::U8, 1).u8(7);
    return b.bytes();
  };
  EXPECT_TRUE(Parses(nested(2)));
  EXPECT_TRUE(Parses(nested(4)));
  EXPECT_TRUE(Rejects(nested(64), {"k.deep", "nested deeper"}));
  // Far deeper than any stack could recurse: must be cut off, not overflow the stack.
  EXPECT_TRUE(Rejects(nested(100000), {"k.deep", "nested deeper"}));
}

TEST(GgufMalformed, BoolNotZeroOrOne) {
  for (uint8_t v : {2, 255}) {
    GgufBuilder b;
    b.header(3, 0, 1).key("k.flag", GgufType::BOOL).u8(v);
    EXPECT_TRUE(Rejects(b.bytes(), {"k.flag", "bool value " + std::to_string(v)}));
  }
  GgufBuilder b;  // inside an array
  b.header(3, 0, 1).key("k.flags", GgufType::ARRAY).array_head(GgufType::BOOL, 3).u8(0).u8(1).u8(2);
  EXPECT_TRUE(Rejects(b.bytes(), {"k.flags", "bool value 2"}));
}

TEST(GgufMalformed, DuplicateKey) {
  GgufBuilder b;
  b.header(3, 0, 3).key("k.a", GgufType::U8).u8(1).key("k.b", GgufType::U8).u8(2).key("k.a", GgufType::STRING).str("x");
  EXPECT_TRUE(Rejects(b.bytes(), {"duplicate", "k.a"}));
}

TEST(GgufMalformed, BadGeneralAlignment) {
  auto as = [](GgufType t) { return static_cast<uint32_t>(t); };
  std::vector<std::vector<uint8_t>> bad = {
      with_alignment([&](GgufBuilder& b) { b.u32(as(GgufType::U32)).u32(0); }),
      with_alignment([&](GgufBuilder& b) { b.u32(as(GgufType::U32)).u32(3); }),
      with_alignment([&](GgufBuilder& b) { b.u32(as(GgufType::U32)).u32(48); }),
      with_alignment([&](GgufBuilder& b) { b.u32(as(GgufType::I32)).i32(-32); }),
      with_alignment([&](GgufBuilder& b) { b.u32(as(GgufType::U32)).u32(1u << 31); }),
      with_alignment([&](GgufBuilder& b) { b.u32(as(GgufType::U64)).u64(uint64_t{1} << 63); }),
      with_alignment([&](GgufBuilder& b) { b.u32(as(GgufType::STRING)).str("32"); }),
      with_alignment([&](GgufBuilder& b) { b.u32(as(GgufType::F32)).f32(32.0f); }),
      with_alignment([&](GgufBuilder& b) { b.u32(as(GgufType::BOOL)).u8(1); }),
      with_alignment([&](GgufBuilder& b) { b.u32(as(GgufType::ARRAY)).array_head(GgufType::U32, 1).u32(32); }),
  };
  for (size_t k = 0; k < bad.size(); ++k) {
    SCOPED_TRACE("case " + std::to_string(k));
    EXPECT_TRUE(Rejects(bad[k], {"general.alignment"}));
  }
}

// ---------------------------------------------------------------- tensor infos

TEST(GgufMalformed, DuplicateTensorName) {
  GgufBuilder b;
  b.header(3, 2, 0).tensor("w", {8}, kF32, 0).tensor("w", {8}, kF32, 32);
  b.pad(32);
  b.fill(64);
  EXPECT_TRUE(Rejects(b.bytes(), {"duplicate tensor name", "'w'"}));
}

TEST(GgufMalformed, TensorDataPastEndOfFile) {
  EXPECT_TRUE(Parses(one_tensor({8}, kF32, 0, 32)));
  EXPECT_TRUE(Rejects(one_tensor({8}, kF32, 0, 31, "short"), {"'short'", "exceeds file size"}));
  EXPECT_TRUE(Rejects(one_tensor({8}, kF32, 32, 48, "far"), {"'far'", "exceeds file size"}));
  EXPECT_TRUE(Rejects(one_tensor({8}, kF32, uint64_t{1} << 40, 32, "far"), {"'far'", "exceeds file size"}));
  // The file ends before the padding that leads to the data section.
  GgufBuilder b;
  b.header(3, 1, 0).tensor("w", {1}, kF32, 0);
  ASSERT_NE(b.size() % 32, 0u);
  EXPECT_TRUE(Rejects(b.bytes(), {"past the end"}));
}

TEST(GgufMalformed, OffsetPlusSizeOverflows) {
  // data_start + offset wraps.
  for (uint64_t off : {kMax64 - 31, kMax64 - 63, uint64_t{1} << 63})
    EXPECT_TRUE(Rejects(one_tensor({16}, kF32, off, 64, "wrap"), {"'wrap'", "exceeds file size"}));
  // data_start + offset fits exactly below 2^64 but adding the 64-byte size wraps.
  GgufBuilder b;
  b.header(3, 1, 0).tensor("wrap", {16}, kF32, 0);
  size_t data_start = (b.size() + 31) / 32 * 32;
  b.patch_u64(b.size() - 8, (kMax64 - 31) - data_start);
  b.pad(32);
  b.fill(64);
  EXPECT_TRUE(Rejects(b.bytes(), {"'wrap'", "exceeds file size"}));
}

TEST(GgufMalformed, MisalignedOffset) {
  for (uint64_t off : {uint64_t{4}, uint64_t{1}, uint64_t{31}, kMax64})
    EXPECT_TRUE(Rejects(one_tensor({8}, kF32, off, 128, "mis"), {"'mis'", "not a multiple of the alignment"}));
}

TEST(GgufMalformed, OverlappingTensors) {
  // b starts inside a; identical offsets; and c listed before a in the file.
  GgufBuilder b1;
  b1.header(3, 2, 0).tensor("a", {16}, kF32, 0).tensor("b", {16}, kF32, 32);
  b1.pad(32);
  b1.fill(128);
  EXPECT_TRUE(Rejects(b1.bytes(), {"'a'", "'b'", "overlap"}));
  GgufBuilder b2;
  b2.header(3, 2, 0).tensor("a", {8}, kF32, 64).tensor("b", {8}, kF32, 64);
  b2.pad(32);
  b2.fill(128);
  EXPECT_TRUE(Rejects(b2.bytes(), {"overlap"}));
  GgufBuilder b3;
  b3.header(3, 3, 0).tensor("c", {64}, kQ8_0, 64).tensor("a", {16}, kF32, 0).tensor("d", {8}, kF32, 128);
  b3.pad(32);
  b3.fill(256);
  EXPECT_TRUE(Rejects(b3.bytes(), {"'c'", "'d'", "overlap"}));
  // Adjacent (touching) tensors are fine.
  GgufBuilder ok;
  ok.header(3, 2, 0).tensor("a", {8}, kF32, 0).tensor("b", {8}, kF32, 32);
  ok.pad(32);
  ok.fill(64);
  EXPECT_TRUE(Parses(ok.bytes()));
}

TEST(GgufMalformed, BadDimensionCount) {
  EXPECT_TRUE(Rejects(one_tensor({}, kF32, 0, 64, "nd"), {"'nd'", "0 dimensions"}));
  EXPECT_TRUE(Rejects(one_tensor({1, 1, 1, 1, 1}, kF32, 0, 64, "nd"), {"'nd'", "5 dimensions"}));
  GgufBuilder b;  // n_dims huge, file far too short for it
  b.header(3, 1, 0).str("nd").u32(0xffffffffu);
  b.fill(64);
  EXPECT_TRUE(Rejects(b.bytes(), {"'nd'", "dimensions"}));
  EXPECT_TRUE(Parses(one_tensor({1, 1, 1, 8}, kF32, 0, 32)));
}

TEST(GgufMalformed, DimsOverflow) {
  const uint64_t big = uint64_t{1} << 32;
  EXPECT_TRUE(Rejects(one_tensor({big, big}, kF32, 0, 64, "ovf"), {"'ovf'", "overflows"}));
  EXPECT_TRUE(Rejects(one_tensor({1 << 16, 1 << 16, 1 << 16, 1 << 16}, kF32, 0, 64, "ovf"), {"'ovf'", "overflows"}));
  EXPECT_TRUE(Rejects(one_tensor({kMax64}, kF32, 0, 64, "ovf"), {"'ovf'", "overflows"}));
  EXPECT_TRUE(Rejects(one_tensor({uint64_t{1} << 63}, kF32, 0, 64, "ovf"), {"'ovf'"}));
  // Element count fits in int64 but the byte size does not fit in 64 bits.
  EXPECT_TRUE(Rejects(one_tensor({uint64_t{1} << 62}, kF32, 0, 64, "ovf"), {"'ovf'", "byte size overflows"}));
  EXPECT_TRUE(Rejects(one_tensor({uint64_t{1} << 61, 2}, kF32, 0, 64, "ovf"), {"'ovf'", "byte size overflows"}));
}

TEST(GgufMalformed, ZeroDim) {
  EXPECT_TRUE(Rejects(one_tensor({4, 0}, kF32, 0, 64, "z"), {"'z'", "zero"}));
  EXPECT_TRUE(Rejects(one_tensor({0}, kF32, 0, 64, "z"), {"'z'", "zero"}));
}

TEST(GgufMalformed, UnknownTensorType) {
  for (uint32_t t : {99u, 4u, 5u, 0xffffffffu})  // 4 and 5 are the retired Q4_2/Q4_3
    EXPECT_TRUE(Rejects(one_tensor({32}, t, 0, 256, "ty"), {"'ty'", "unknown type id " + std::to_string(t)}));
}

TEST(GgufMalformed, RowNotMultipleOfBlock) {
  EXPECT_TRUE(Rejects(one_tensor({33}, kQ8_0, 0, 256, "q"), {"'q'", "row length 33", "Q8_0", "block size 32"}));
  // 16 x 2 is one whole block in total, but rows must be whole blocks.
  EXPECT_TRUE(Rejects(one_tensor({16, 2}, kQ8_0, 0, 256, "q"), {"'q'", "row length 16"}));
  EXPECT_TRUE(Parses(one_tensor({32, 2}, kQ8_0, 0, 68)));
}

// ---------------------------------------------------------------- typed getters

TEST(Gguf, TypedGettersNameKeyOnWrongType) {
  auto v = make_valid();
  auto f = Image(v.bytes).parse();
  auto throws_naming = [](auto&& fn, std::string_view key) {
    try {
      fn();
    } catch (const Error& e) {
      return std::string_view(e.what()).find(key) != std::string_view::npos
                 ? ::testing::AssertionSuccess()
                 : ::testing::AssertionFailure() << "message lacks key: " << e.what();
    }
    return ::testing::AssertionFailure() << "no error for " << key;
  };
  EXPECT_TRUE(throws_naming([&] { f->get_int("general.architecture"); }, "general.architecture"));
  EXPECT_TRUE(throws_naming([&] { f->get_int("t.f32"); }, "t.f32"));
  EXPECT_TRUE(throws_naming([&] { f->get_int("t.bool"); }, "t.bool"));
  EXPECT_TRUE(throws_naming([&] { f->get_int("t.strings"); }, "t.strings"));
  EXPECT_TRUE(throws_naming([&] { f->get_float("general.architecture"); }, "general.architecture"));
  EXPECT_TRUE(throws_naming([&] { f->get_string("t.u32"); }, "t.u32"));
  EXPECT_TRUE(throws_naming([&] { f->get_bool("t.u8"); }, "t.u8"));
  EXPECT_TRUE(throws_naming([&] { f->get_array("t.u8", GgufType::U8); }, "t.u8"));
  EXPECT_TRUE(throws_naming([&] { f->get_array("t.strings", GgufType::I32); }, "t.strings"));
  EXPECT_EQ(f->get_float("t.u8"), 200.0);

  // A u64 beyond int64 is not representable by get_int.
  GgufBuilder b;
  b.header(3, 0, 1).key("k.huge", GgufType::U64).u64(kMax64);
  auto g = Image(b.bytes()).parse();
  EXPECT_TRUE(throws_naming([&] { g->get_int("k.huge"); }, "k.huge"));
}

// ---------------------------------------------------------------- random mutations

TEST(GgufMalformed, RandomMutationsNeverCrash) {
  const std::vector<uint8_t> valid = make_valid().bytes;
  // Values that tend to hit boundaries when dropped onto a length, count, dim or offset.
  const uint64_t interesting[] = {0, 1, 2, 5, 9, 13, 32, 33, 64, 0x7f, 0xff, 0xffff, 0xffffffffu,
                                  uint64_t{1} << 32, uint64_t{1} << 62, uint64_t{1} << 63, kMax64, kMax64 - 31,
                                  valid.size(), valid.size() + 1};
  std::mt19937_64 rng(0x6775'6666);
  int parsed = 0, rejected = 0;
  for (int iter = 0; iter < 4000; ++iter) {
    std::vector<uint8_t> m = valid;
    int n_mut = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < n_mut; ++k) {
      size_t at = rng() % m.size();
      switch (rng() % 4) {
        case 0: m[at] ^= static_cast<uint8_t>(1u << (rng() % 8)); break;
        case 1: m[at] = static_cast<uint8_t>(rng()); break;
        case 2: {  // overwrite up to 8 bytes with an interesting little-endian value
          uint64_t val = interesting[rng() % std::size(interesting)];
          for (size_t j = 0; j < 8 && at + j < m.size(); ++j) m[at + j] = static_cast<uint8_t>(val >> (8 * j));
          break;
        }
        case 3: m.resize(std::max<size_t>(at, 1)); break;  // truncate
      }
    }
    Image img(m);
    try {
      auto f = img.parse();
      // Whatever parsed must describe memory inside the image.
      for (const auto& t : f->tensors()) {
        ASSERT_GE(t.data, img.buf.get());
        ASSERT_LE(t.data + t.n_bytes, img.buf.get() + img.size);
      }
      ++parsed;
    } catch (const Error& e) {
      ASSERT_TRUE(std::string_view(e.what()).starts_with("gguf: ")) << e.what();
      ++rejected;
    } catch (const std::exception& e) {
      FAIL() << "iteration " << iter << ": non-minnow exception: " << e.what();
    }
  }
  // Both outcomes occur, so the mutations reach past the first check and the test is not vacuous.
  EXPECT_GT(parsed, 0);
  EXPECT_GT(rejected, 0);
}

// A value built by hand (as a writer's caller may) whose count claims more than its bytes
// hold: decoding throws Error, never reads past the bytes or reserves the claimed count.
TEST(Gguf, ArrayDecodersRefuseCountsTheBytesCannotHold) {
  const std::string bytes(6, '\0');
  GgufValue v;
  v.type = GgufType::ARRAY, v.elem_type = GgufType::U32, v.count = uint64_t{1} << 40, v.bytes = bytes;
  EXPECT_THROW(v.elements(), minnow::Error);
  EXPECT_THROW(v.ints(), minnow::Error);
  v.elem_type = GgufType::STRING;
  EXPECT_THROW(v.strings(), minnow::Error);
  v.elem_type = GgufType::F64;
  EXPECT_THROW(v.floats(), minnow::Error);
}
