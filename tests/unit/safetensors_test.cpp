// safetensors reader: hand-built files parse to the right tensors and values, and files broken
// in one specific way each (plus every truncation and random mutations) are rejected with
// minnow::Error and never crash. Parses run on exactly-sized heap copies so that ASan reports
// any read past the end. Checkpoint directories are built in a temporary directory.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.hpp"
#include "formats/safetensors.hpp"
#include "tensor/fp16.hpp"

using namespace minnow;
using namespace std::literals;
namespace fs = std::filesystem;

namespace {

using Bytes = std::vector<uint8_t>;

// `"name":{"dtype":...,"shape":[...],"data_offsets":[b,e]}`, one header entry.
std::string entry(std::string_view name, std::string_view dtype, std::string_view shape, uint64_t b, uint64_t e) {
  std::string s = "\"";
  s.append(name).append("\":{\"dtype\":\"").append(dtype).append("\",\"shape\":").append(shape);
  return s + ",\"data_offsets\":[" + std::to_string(b) + "," + std::to_string(e) + "]}";
}

// u64 LE length + header (space-padded to 8-byte alignment unless pad is false) + data.
Bytes image(std::string_view header, const Bytes& data = {}, bool pad = true) {
  std::string h(header);
  while (pad && h.size() % 8) h += ' ';
  Bytes b(8 + h.size() + data.size());
  for (int k = 0; k < 8; ++k) b[k] = static_cast<uint8_t>(uint64_t{h.size()} >> (8 * k));
  std::copy(h.begin(), h.end(), b.begin() + 8);
  std::copy(data.begin(), data.end(), b.begin() + 8 + static_cast<ptrdiff_t>(h.size()));
  return b;
}

Bytes zeros(size_t n) { return Bytes(n, 0); }

template <typename T>
void put(Bytes& b, size_t at, T v) {
  std::memcpy(&b[at], &v, sizeof(T));
}

// Exactly-sized heap copy: any read past the end lands in ASan's redzone (and new[] is
// 16-byte aligned, like a mapping for our purposes).
struct Image {
  explicit Image(const Bytes& v, size_t n) : size(n), buf(new uint8_t[n ? n : 1]) {
    if (n) std::memcpy(buf.get(), v.data(), n);
  }
  explicit Image(const Bytes& v) : Image(v, v.size()) {}
  std::unique_ptr<SafetensorsFile> parse() const { return SafetensorsFile::parse(buf.get(), size); }
  size_t size;
  std::unique_ptr<uint8_t[]> buf;
};

::testing::AssertionResult MessageHas(std::string_view msg, std::initializer_list<std::string_view> needles) {
  for (std::string_view n : needles)
    if (msg.find(n) == std::string_view::npos) return ::testing::AssertionFailure() << "message lacks '" << n << "': " << msg;
  if (msg.find('\n') != std::string_view::npos) return ::testing::AssertionFailure() << "message spans lines: " << msg;
  return ::testing::AssertionSuccess() << msg;
}

// Parse must fail with minnow::Error "safetensors: ..." mentioning every needle.
::testing::AssertionResult Rejects(const Bytes& bytes, std::initializer_list<std::string_view> needles,
                                   size_t size = SIZE_MAX) {
  Image img(bytes, std::min(size, bytes.size()));
  try {
    img.parse();
  } catch (const Error& e) {
    std::string_view msg = e.what();
    if (!msg.starts_with("safetensors: ")) return ::testing::AssertionFailure() << "message lacks 'safetensors: ': " << msg;
    return MessageHas(msg, needles);
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "threw a non-minnow exception: " << e.what();
  }
  return ::testing::AssertionFailure() << "parsed without error";
}
::testing::AssertionResult RejectsHeader(std::string_view header, std::initializer_list<std::string_view> needles,
                                         size_t data_bytes = 64) {
  return Rejects(image(header, zeros(data_bytes)), needles);
}

// A file with one tensor of each interesting kind; values are recognisable.
struct Valid {
  Bytes bytes;
  size_t data_start;
};
Valid make_valid() {
  std::string h = std::string("{\"__metadata__\":{\"format\":\"pt\",\"note\":\"h\\u00e9\"},") +
                  entry("w", "F32", "[2,3]", 0, 24) + "," + entry("half", "F16", "[4]", 24, 32) + "," +
                  entry("bf", "BF16", "[2,2]", 32, 40) + "," + entry("ids", "I64", "[3]", 40, 64) + "," +
                  entry("scalar", "F32", "[]", 64, 68) + "," + entry("empty", "F32", "[0,5]", 68, 68) + "," +
                  entry("mask", "BOOL", "[3]", 68, 71) + "}";
  Bytes d = zeros(71);
  for (int k = 0; k < 6; ++k) put(d, 4 * k, 0.5f * static_cast<float>(k) - 1.0f);
  for (int k = 0; k < 4; ++k) put(d, 24 + 2 * k, fp32_to_fp16(static_cast<float>(k) + 0.25f));
  for (int k = 0; k < 4; ++k) put(d, 32 + 2 * k, static_cast<uint16_t>(fp32_to_bits(-2.0f * static_cast<float>(k)) >> 16));
  for (int k = 0; k < 3; ++k) put(d, 40 + 8 * k, int64_t{-7} + k * (int64_t{1} << 40));
  put(d, 64, 3.5f);
  d[68] = 1, d[69] = 0, d[70] = 1;
  Bytes b = image(h, d);
  return {b, b.size() - d.size()};
}

template <typename T>
T at(const SafetensorsTensor& t, size_t i) {
  T v;
  std::memcpy(&v, t.data + i * sizeof(T), sizeof(T));
  return v;
}

}  // namespace

TEST(Safetensors, ParsesWellFormedFile) {
  Valid v = make_valid();
  ASSERT_EQ(v.data_start % 8, 0u);
  Image img(v.bytes);
  auto f = img.parse();
  const uint8_t* data = img.buf.get() + v.data_start;

  EXPECT_EQ(f->metadata().size(), 2u);
  EXPECT_EQ(f->metadata().at("format"), "pt");
  EXPECT_EQ(f->metadata().at("note"), "h\xc3\xa9");  // \u escapes decode to UTF-8

  ASSERT_EQ(f->tensors().size(), 7u);  // header order, metadata excluded
  const auto& w = f->tensors()[0];
  EXPECT_EQ(w.name, "w");
  EXPECT_EQ(w.dtype, "F32");
  EXPECT_EQ(w.type, DType::F32);
  EXPECT_EQ(w.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(w.n_elements, 6u);
  EXPECT_EQ(w.n_bytes, 24u);
  EXPECT_EQ(w.offset, 0u);
  EXPECT_EQ(w.data, data);
  for (int k = 0; k < 6; ++k) EXPECT_EQ(at<float>(w, k), 0.5f * static_cast<float>(k) - 1.0f);

  const auto* half = f->find("half");
  ASSERT_NE(half, nullptr);
  EXPECT_EQ(half->type, DType::F16);
  EXPECT_EQ(half->data, data + 24);
  for (int k = 0; k < 4; ++k) EXPECT_EQ(fp16_to_fp32(at<uint16_t>(*half, k)), static_cast<float>(k) + 0.25f);

  const auto* bf = f->find("bf");
  ASSERT_NE(bf, nullptr);
  EXPECT_EQ(bf->type, DType::BF16);
  EXPECT_EQ(bf->shape, (std::vector<int64_t>{2, 2}));
  for (int k = 0; k < 4; ++k) EXPECT_EQ(bf16_to_fp32(at<uint16_t>(*bf, k)), -2.0f * static_cast<float>(k));

  const auto* ids = f->find("ids");
  ASSERT_NE(ids, nullptr);
  EXPECT_EQ(ids->dtype, "I64");
  EXPECT_EQ(ids->type, std::nullopt);  // readable, not bindable
  EXPECT_EQ(ids->n_bytes, 24u);
  for (int k = 0; k < 3; ++k) EXPECT_EQ(at<int64_t>(*ids, k), int64_t{-7} + k * (int64_t{1} << 40));

  const auto* scalar = f->find("scalar");
  ASSERT_NE(scalar, nullptr);
  EXPECT_TRUE(scalar->shape.empty());
  EXPECT_EQ(scalar->n_elements, 1u);
  EXPECT_EQ(scalar->n_bytes, 4u);
  EXPECT_EQ(at<float>(*scalar, 0), 3.5f);

  const auto* empty = f->find("empty");
  ASSERT_NE(empty, nullptr);
  EXPECT_EQ(empty->shape, (std::vector<int64_t>{0, 5}));
  EXPECT_EQ(empty->n_elements, 0u);
  EXPECT_EQ(empty->n_bytes, 0u);
  EXPECT_EQ(empty->data, data + 68);

  const auto* mask = f->find("mask");
  ASSERT_NE(mask, nullptr);
  EXPECT_EQ(mask->type, std::nullopt);
  EXPECT_EQ(mask->data + mask->n_bytes, img.buf.get() + img.size);
  EXPECT_EQ(mask->data[0], 1);
  EXPECT_EQ(mask->data[2], 1);

  EXPECT_EQ(f->find("nope"), nullptr);
  EXPECT_EQ(f->find("__metadata__"), nullptr);
}

TEST(Safetensors, DtypeSizes) {
  for (auto d : {"BOOL", "U8", "I8", "F8_E4M3", "F8_E5M2", "F8_E8M0"}) EXPECT_EQ(safetensors_dtype_size(d), 1u) << d;
  for (auto d : {"U16", "I16", "F16", "BF16"}) EXPECT_EQ(safetensors_dtype_size(d), 2u) << d;
  for (auto d : {"U32", "I32", "F32"}) EXPECT_EQ(safetensors_dtype_size(d), 4u) << d;
  for (auto d : {"U64", "I64", "F64", "C64"}) EXPECT_EQ(safetensors_dtype_size(d), 8u) << d;
  for (auto d : {"", "f32", "F4", "F6_E2M3", "Q4_0", "F32 "}) EXPECT_EQ(safetensors_dtype_size(d), std::nullopt) << d;
}

TEST(Safetensors, AcceptsEmptyHeaderGapsAndTrailingBytes) {
  EXPECT_TRUE(Image(image("{}")).parse()->tensors().empty());
  EXPECT_TRUE(Image(image("{\"__metadata__\":{}}")).parse()->metadata().empty());
  // Gaps between tensors and bytes after the last are harmless; whitespace pads the header.
  auto f = Image(image(std::string("\n { ") + entry("b", "F32", "[2]", 16, 24) + "," + entry("a", "U8", "[3]", 1, 4) + "}\t",
                       zeros(40)))
               .parse();
  ASSERT_EQ(f->tensors().size(), 2u);
  EXPECT_EQ(f->tensors()[0].name, "b");
  EXPECT_EQ(f->find("a")->offset, 1u);  // 1-byte elements are never misaligned
}

TEST(Safetensors, OpenMapsFileAndNamesPathInErrors) {
  const std::string path = ::testing::TempDir() + "minnow_st_test_" + std::to_string(::getpid()) + ".safetensors";
  Valid v = make_valid();
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(v.bytes.data()), static_cast<std::streamsize>(v.bytes.size()));
  }
  {
    auto f = SafetensorsFile::open(path);
    EXPECT_EQ(f->path(), path);
    ASSERT_NE(f->find("scalar"), nullptr);
    EXPECT_EQ(at<float>(*f->find("scalar"), 0), 3.5f);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(f->find("w")->data) % 8, 0u);  // the mapping is page aligned
  }
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << "abc";
  }
  try {
    SafetensorsFile::open(path);
    ADD_FAILURE() << "short file parsed";
  } catch (const Error& e) {
    EXPECT_TRUE(MessageHas(e.what(), {path, "safetensors: ", "3 bytes"}));
  }
  std::remove(path.c_str());
  EXPECT_THROW(SafetensorsFile::open(path), Error);
}

TEST(SafetensorsMalformed, ShortFileAndHeaderLength) {
  Bytes v = make_valid().bytes;
  for (size_t n = 0; n < 8; ++n) EXPECT_TRUE(Rejects(v, {"too short"}, n)) << n;
  Bytes b = image("{}");
  put<uint64_t>(b, 0, 9);
  EXPECT_TRUE(Rejects(b, {"header length 9 exceeds the 8 bytes"}));
  put<uint64_t>(b, 0, ~uint64_t{0});
  EXPECT_TRUE(Rejects(b, {"header length 18446744073709551615", "limit"}));
  put<uint64_t>(b, 0, SafetensorsFile::kMaxHeaderBytes + 1);
  EXPECT_TRUE(Rejects(b, {"limit of 104857600"}));
  EXPECT_TRUE(Rejects(image(""), {"not valid JSON"}));
}

TEST(SafetensorsMalformed, EveryTruncationThrows) {
  Bytes v = make_valid().bytes;  // its last tensor ends at the end of the file
  for (size_t n = 0; n < v.size(); ++n) EXPECT_TRUE(Rejects(v, {}, n)) << "truncated to " << n;
}

TEST(SafetensorsMalformed, NotJsonOrNotAnObject) {
  for (auto h : {"{", "{\"a\":}", "{} x", "{'a':1}", "{\"__metadata__\":{},}", "{\"a\" 1}", "nul", "{\"a\":{\"dtype\":\"F32\"", "\x01"})
    EXPECT_TRUE(RejectsHeader(h, {"not valid JSON"})) << h;
  for (auto h : {"[]", "1", "\"s\"", "null", "true", "1.5"}) EXPECT_TRUE(RejectsHeader(h, {"not a JSON object"})) << h;
  // Messages stay printable even when the offending token is not.
  EXPECT_TRUE(RejectsHeader("{\"a\":\x7f\x80\n}", {"not valid JSON"}));
}

TEST(SafetensorsMalformed, NotUtf8) {
  EXPECT_TRUE(RejectsHeader("{\"\xff\":{}}", {"not valid JSON"}));
  EXPECT_TRUE(RejectsHeader("{\"\xc0\xaf\":{}}", {"not valid JSON"}));        // overlong '/'
  EXPECT_TRUE(RejectsHeader("{\"\xed\xa0\x80\":{}}", {"not valid JSON"}));    // encoded surrogate
  EXPECT_TRUE(RejectsHeader("{\"a\xe2\x82\":{}}", {"not valid JSON"}));       // cut sequence
  EXPECT_TRUE(RejectsHeader("{\"\\ud800\":{}}", {"not valid JSON"}));         // lone escaped surrogate
  EXPECT_TRUE(RejectsHeader("{\"__metadata__\":{\"k\":\"\xfe\"}}", {"not valid JSON"}));
}

TEST(SafetensorsMalformed, EntryNotAnObject) {
  EXPECT_TRUE(RejectsHeader(R"({"w":1})", {"tensor 'w'", "entry is a number, not an object"}));
  EXPECT_TRUE(RejectsHeader(R"({"w":[]})", {"tensor 'w'", "an array"}));
  EXPECT_TRUE(RejectsHeader(R"({"w":"F32"})", {"tensor 'w'", "a string"}));
  EXPECT_TRUE(RejectsHeader(R"({"w":null})", {"tensor 'w'", "null"}));
}

TEST(SafetensorsMalformed, MissingOrWronglyTypedFields) {
  EXPECT_TRUE(RejectsHeader(R"({"w":{"shape":[1],"data_offsets":[0,4]}})", {"tensor 'w'", "missing dtype"}));
  EXPECT_TRUE(RejectsHeader(R"({"w":{"dtype":"F32","data_offsets":[0,4]}})", {"tensor 'w'", "missing shape"}));
  EXPECT_TRUE(RejectsHeader(R"({"w":{"dtype":"F32","shape":[1]}})", {"tensor 'w'", "missing data_offsets"}));
  EXPECT_TRUE(RejectsHeader(R"({"w":{}})", {"tensor 'w'", "missing dtype"}));
  EXPECT_TRUE(RejectsHeader(R"({"w":{"dtype":32,"shape":[1],"data_offsets":[0,4]}})", {"dtype is a number, not a string"}));
  EXPECT_TRUE(RejectsHeader(R"({"w":{"dtype":["F32"]}})", {"dtype is an array, not a string"}));
  EXPECT_TRUE(RejectsHeader(R"({"w":{"dtype":"F32","shape":"1"}})", {"shape is a string, not an array"}));
  EXPECT_TRUE(RejectsHeader(R"({"w":{"dtype":"F32","shape":{}}})", {"shape is an object, not an array"}));
  EXPECT_TRUE(RejectsHeader(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":4}})",
                            {"data_offsets is a number, not an array"}));
  EXPECT_TRUE(RejectsHeader(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"extra":1}})",
                            {"tensor 'w'", "unknown key 'extra'"}));
  EXPECT_TRUE(RejectsHeader(R"({"w":{"dtype":"F32","dtype":"F16"}})", {"tensor 'w'", "duplicate key 'dtype'"}));
  EXPECT_TRUE(RejectsHeader(R"({"w":{"shape":[1],"shape":[1]}})", {"duplicate key 'shape'"}));
}

TEST(SafetensorsMalformed, UnknownDtype) {
  for (auto d : {"F4", "f32", "", "FLOAT", "Q8_0"})
    EXPECT_TRUE(RejectsHeader(std::string("{") + entry("w", d, "[1]", 0, 4) + "}", {"tensor 'w'", "unknown dtype"})) << d;
}

TEST(SafetensorsMalformed, BadDims) {
  auto with_shape = [](std::string_view shape) { return std::string("{") + entry("w", "F32", shape, 0, 4) + "}"; };
  EXPECT_TRUE(RejectsHeader(with_shape("[-1]"), {"tensor 'w'", "shape holds the negative number -1"}));
  EXPECT_TRUE(RejectsHeader(with_shape("[1.5]"), {"shape holds the non-integer '1.5'"}));
  EXPECT_TRUE(RejectsHeader(with_shape("[2.0]"), {"non-integer '2.0'"}));
  EXPECT_TRUE(RejectsHeader(with_shape("[1e3]"), {"non-integer '1e3'"}));
  EXPECT_TRUE(RejectsHeader(with_shape("[18446744073709551616]"), {"non-integer"}));  // beyond u64
  EXPECT_TRUE(RejectsHeader(with_shape("[\"4\"]"), {"shape holds a string"}));
  EXPECT_TRUE(RejectsHeader(with_shape("[null]"), {"shape holds null"}));
  EXPECT_TRUE(RejectsHeader(with_shape("[[1]]"), {"shape holds an array"}));
  EXPECT_TRUE(RejectsHeader(with_shape("[{}]"), {"shape holds an object"}));
  EXPECT_TRUE(RejectsHeader(with_shape("[1,1,1,1,1,1,1,1,1]"), {"tensor 'w'", "shape has 9 dims (at most 8)"}));
  EXPECT_TRUE(RejectsHeader(with_shape("[1,1,1,1,1,1,1,1,1,1,1]"), {"tensor 'w'", "shape has more than 8"}));
  EXPECT_TRUE(Image(image(std::string("{") + entry("w", "F32", "[1,1,1,1,1,1,1,1]", 0, 4) + "}", zeros(8))).parse());
}

TEST(SafetensorsMalformed, SizeOverflow) {
  auto with_shape = [](std::string_view dt, std::string_view shape) { return std::string("{") + entry("w", dt, shape, 0, 8) + "}"; };
  EXPECT_TRUE(RejectsHeader(with_shape("F32", "[4294967296,4294967296]"), {"tensor 'w'", "element count", "overflows"}));
  EXPECT_TRUE(RejectsHeader(with_shape("U8", "[9223372036854775808]"), {"element count", "overflows"}));  // 2^63
  EXPECT_TRUE(RejectsHeader(with_shape("U8", "[4611686018427387904,2]"), {"element count", "overflows"}));
  EXPECT_TRUE(RejectsHeader(with_shape("F64", "[4611686018427387904]"), {"byte size", "overflows"}));  // 2^62 * 8
  // A huge shape whose byte size fits still needs its bytes.
  EXPECT_TRUE(RejectsHeader(with_shape("F32", "[1099511627776]"), {"span 8 bytes", "needs 4398046511104"}));
  // An empty dim makes any other dims harmless.
  EXPECT_TRUE(Image(image(std::string("{") + entry("w", "F64", "[0,9223372036854775807]", 0, 0) + "}")).parse());
}

TEST(SafetensorsMalformed, BadDataOffsets) {
  auto with_offsets = [](std::string_view offs) {
    return std::string(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":)").append(offs) + "}}";
  };
  EXPECT_TRUE(RejectsHeader(with_offsets("[0]"), {"tensor 'w'", "data_offsets has 1 entries, not 2"}));
  EXPECT_TRUE(RejectsHeader(with_offsets("[]"), {"data_offsets has 0 entries"}));
  EXPECT_TRUE(RejectsHeader(with_offsets("[0,8,16]"), {"data_offsets has 3 entries, not 2"}));
  EXPECT_TRUE(RejectsHeader(with_offsets("[0,8,16,24,32]"), {"data_offsets has more than 2"}));
  EXPECT_TRUE(RejectsHeader(with_offsets("[0.0,8]"), {"data_offsets holds the non-integer"}));
  EXPECT_TRUE(RejectsHeader(with_offsets("[-8,0]"), {"data_offsets holds the negative number -8"}));
  EXPECT_TRUE(RejectsHeader(with_offsets("[\"0\",8]"), {"data_offsets holds a string"}));
  EXPECT_TRUE(RejectsHeader(with_offsets("[16,8]"), {"tensor 'w'", "[16, 8] begin after they end"}));
  EXPECT_TRUE(RejectsHeader(with_offsets("[60,68]"), {"tensor 'w'", "[60, 68] extend past the 64-byte data section"}));
  EXPECT_TRUE(RejectsHeader(with_offsets("[18446744073709551608,18446744073709551615]"), {"extend past"}));
  EXPECT_TRUE(RejectsHeader(with_offsets("[0,12]"), {"tensor 'w'", "span 12 bytes but F32 shape [2] needs 8"}));
  EXPECT_TRUE(RejectsHeader(with_offsets("[0,4]"), {"span 4 bytes"}));
  EXPECT_TRUE(Image(image(with_offsets("[56,64]"), zeros(64))).parse());  // ends exactly at the end
}

TEST(SafetensorsMalformed, Overlap) {
  EXPECT_TRUE(RejectsHeader(std::string("{") + entry("a", "F32", "[4]", 0, 16) + "," + entry("b", "F32", "[2]", 8, 16) + "}",
                            {"tensors 'a' and 'b' overlap"}));
  EXPECT_TRUE(RejectsHeader(std::string("{") + entry("a", "F32", "[4]", 16, 32) + "," + entry("b", "F32", "[5]", 0, 20) + "}",
                            {"'b' and 'a' overlap"}));
  EXPECT_TRUE(RejectsHeader(std::string("{") + entry("a", "U8", "[4]", 0, 4) + "," + entry("b", "U8", "[4]", 0, 4) + "}",
                            {"overlap"}));
  // Touching ranges and empty tensors inside others do not overlap.
  EXPECT_TRUE(Image(image(std::string("{") + entry("a", "F32", "[4]", 0, 16) + "," + entry("b", "F32", "[2]", 16, 24) + "," +
                          entry("c", "F32", "[0]", 8, 8) + "}",
                          zeros(24)))
                  .parse());
}

TEST(SafetensorsMalformed, Misaligned) {
  EXPECT_TRUE(RejectsHeader(std::string("{") + entry("w", "F32", "[2]", 2, 10) + "}", {"tensor 'w'", "not aligned to its 4-byte F32"}));
  EXPECT_TRUE(RejectsHeader(std::string("{") + entry("w", "I64", "[1]", 4, 12) + "}", {"8-byte I64"}));
  EXPECT_TRUE(RejectsHeader(std::string("{") + entry("w", "BF16", "[1]", 1, 3) + "}", {"2-byte BF16"}));
  // An unpadded header moves the whole data section off alignment.
  std::string h = std::string("{") + entry("w", "F32", "[1]", 0, 4) + "}";
  Bytes odd = image(h + (h.size() % 2 ? "" : " "), zeros(8), false);
  ASSERT_EQ((odd.size() - 8) % 2, 1u);
  EXPECT_TRUE(Rejects(odd, {"tensor 'w'", "not aligned"}));
  // Byte-sized and empty tensors have nothing to misalign.
  EXPECT_TRUE(Image(image(std::string("{") + entry("w", "U8", "[1]", 0, 1) + "," + entry("e", "F32", "[0]", 3, 3) + "}", zeros(8),
                          false))
                  .parse());
}

TEST(SafetensorsMalformed, DuplicateNames) {
  EXPECT_TRUE(RejectsHeader(std::string("{") + entry("w", "F32", "[1]", 0, 4) + "," + entry("w", "F32", "[1]", 8, 12) + "}",
                            {"duplicate header key 'w'"}));
  EXPECT_TRUE(RejectsHeader(R"({"__metadata__":{},"__metadata__":{}})", {"duplicate header key '__metadata__'"}));
  EXPECT_TRUE(RejectsHeader(R"({"__metadata__":{"a":"1","a":"2"}})", {"duplicate __metadata__ key 'a'"}));
}

TEST(SafetensorsMalformed, BadMetadata) {
  EXPECT_TRUE(RejectsHeader(R"({"__metadata__":"pt"})", {"__metadata__ is a string, not an object"}));
  EXPECT_TRUE(RejectsHeader(R"({"__metadata__":[]})", {"__metadata__ is an array"}));
  EXPECT_TRUE(RejectsHeader(R"({"__metadata__":null})", {"__metadata__ is null"}));
  EXPECT_TRUE(RejectsHeader(R"({"__metadata__":{"n":1}})", {"__metadata__ value 'n' is a number, not a string"}));
  EXPECT_TRUE(RejectsHeader(R"({"__metadata__":{"n":{}}})", {"value 'n' is an object"}));
  EXPECT_TRUE(RejectsHeader(R"({"__metadata__":{"n":["a"]}})", {"value 'n' is an array"}));
  EXPECT_TRUE(RejectsHeader(R"({"__metadata__":{"n":true}})", {"value 'n' is a boolean"}));
}

TEST(SafetensorsMalformed, DeepNestingAndHostileNames) {
  // Deep nesting is refused at the first level a header cannot have, without building it.
  const std::string deep(200000, '[');
  EXPECT_TRUE(RejectsHeader(deep, {"not a JSON object"}));
  EXPECT_TRUE(RejectsHeader("{\"w\":{\"shape\":" + deep, {"shape holds an array"}));
  EXPECT_TRUE(RejectsHeader(std::string("{\"__metadata__\":{\"k\":") + std::string(200000, '{'), {"value 'k' is an object"}));
  // Names with control characters or of great length keep messages to one short line.
  EXPECT_TRUE(RejectsHeader(R"({"a\nb\u0000c":1})", {"tensor 'a?b?c'"}));
  EXPECT_TRUE(RejectsHeader(std::string("{\"") + std::string(5000, 'x') + "\":1}", {"xxx...'"}));
}

TEST(SafetensorsMalformed, RandomMutationsNeverCrash) {
  const Bytes valid = make_valid().bytes;
  std::mt19937 rng(1234);
  int parsed = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    Bytes b = valid;
    const int n_mut = 1 + static_cast<int>(rng() % 4);
    for (int m = 0; m < n_mut; ++m) {
      // Mostly hit the header, where the structure is.
      size_t pos = rng() % 3 ? 8 + rng() % (b.size() - 8 - 71) : rng() % b.size();
      const char* interesting = "{}[]\",:-.0123456789e \\u";
      b[pos] = rng() % 2 ? static_cast<uint8_t>(interesting[rng() % 24]) : static_cast<uint8_t>(rng());
    }
    size_t size = rng() % 8 ? b.size() : rng() % b.size();
    Image img(b, size);
    try {
      auto f = img.parse();
      ++parsed;
      for (const auto& t : f->tensors())
        ASSERT_TRUE(t.data >= img.buf.get() && t.n_bytes <= size && t.data + t.n_bytes <= img.buf.get() + size);
    } catch (const Error&) {
    }
  }
  EXPECT_GT(parsed, 0);
}

// ---- Checkpoint directories ----

namespace {

class TempDir {
 public:
  TempDir() {
    std::string tmpl = ::testing::TempDir() + "minnow_st_ckpt_XXXXXX";
    if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }
  std::string str() const { return path_.string(); }
  void write(const std::string& name, std::string_view text) const {
    std::ofstream out(path_ / name, std::ios::binary | std::ios::trunc);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
  }
  void write(const std::string& name, const Bytes& b) const {
    write(name, std::string_view(reinterpret_cast<const char*>(b.data()), b.size()));
  }

 private:
  fs::path path_;
};

// A shard of F32 tensors named `names`, each [2] holding {base + i, base + i + 0.5}.
Bytes shard(std::initializer_list<std::string_view> names, float base) {
  std::string h = "{";
  Bytes d;
  size_t i = 0;
  for (auto n : names) {
    h += std::string(i ? "," : "") + entry(n, "F32", "[2]", 8 * i, 8 * i + 8);
    d.resize(d.size() + 8);
    put(d, 8 * i, base + static_cast<float>(i));
    put(d, 8 * i + 4, base + static_cast<float>(i) + 0.5f);
    ++i;
  }
  return image(h + "}", d);
}

std::string index_json(std::initializer_list<std::pair<std::string_view, std::string_view>> map) {
  std::string s = R"({"metadata":{"total_size":48,"nested":[{"weight_map":1}]},"weight_map":{)";
  bool first = true;
  for (auto [t, f] : map) {
    s += std::string(first ? "\"" : ",\"") + std::string(t) + "\":\"" + std::string(f) + "\"";
    first = false;
  }
  return s + "}}";
}

::testing::AssertionResult CheckpointRejects(const TempDir& dir, std::initializer_list<std::string_view> needles) {
  try {
    SafetensorsCheckpoint::open(dir.str());
  } catch (const Error& e) {
    return MessageHas(e.what(), needles);
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "threw a non-minnow exception: " << e.what();
  }
  return ::testing::AssertionFailure() << "opened without error";
}

const std::string kIndex = "model.safetensors.index.json";

}  // namespace

TEST(SafetensorsCheckpoint, SingleFile) {
  TempDir dir;
  dir.write("model.safetensors", shard({"b", "a"}, 1.0f));
  dir.write("other.safetensors", shard({"a"}, 9.0f));  // ignored: only model.safetensors counts
  auto c = SafetensorsCheckpoint::open(dir.str());
  EXPECT_EQ(c->n_files(), 1u);
  auto all = c->tensors();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0]->name, "a");
  EXPECT_EQ(all[1]->name, "b");
  ASSERT_NE(c->find("a"), nullptr);
  EXPECT_EQ(at<float>(*c->find("a"), 1), 2.5f);
  EXPECT_EQ(at<float>(*c->find("b"), 0), 1.0f);
  EXPECT_EQ(c->find("c"), nullptr);
}

TEST(SafetensorsCheckpoint, ShardedWithIndex) {
  TempDir dir;
  dir.write("model-00001-of-00002.safetensors", shard({"layers.0.w", "embed"}, 10.0f));
  dir.write("model-00002-of-00002.safetensors", shard({"layers.1.w", "norm", "extra"}, 20.0f));
  dir.write("model.safetensors", shard({"embed"}, 99.0f));  // the index wins over it
  dir.write(kIndex, index_json({{"embed", "model-00001-of-00002.safetensors"},
                                {"layers.0.w", "model-00001-of-00002.safetensors"},
                                {"layers.1.w", "model-00002-of-00002.safetensors"},
                                {"norm", "model-00002-of-00002.safetensors"}}));
  auto c = SafetensorsCheckpoint::open(dir.str());
  EXPECT_EQ(c->n_files(), 2u);
  std::vector<std::string> names;
  for (const auto* t : c->tensors()) names.push_back(t->name);
  // Tensors a shard holds beyond the weight_map are included too.
  EXPECT_EQ(names, (std::vector<std::string>{"embed", "extra", "layers.0.w", "layers.1.w", "norm"}));
  EXPECT_EQ(at<float>(*c->find("embed"), 0), 11.0f);
  EXPECT_EQ(at<float>(*c->find("layers.0.w"), 1), 10.5f);
  EXPECT_EQ(at<float>(*c->find("norm"), 0), 21.0f);
  EXPECT_EQ(at<float>(*c->find("extra"), 1), 22.5f);
  EXPECT_EQ(c->find("layers.1.w")->type, DType::F32);
}

TEST(SafetensorsCheckpoint, MissingDirectoryOrFiles) {
  TempDir dir;
  try {
    SafetensorsCheckpoint::open(dir.str() + "/nope");
    ADD_FAILURE() << "opened a missing directory";
  } catch (const Error& e) {
    EXPECT_TRUE(MessageHas(e.what(), {"nope", "is not a directory"}));
  }
  dir.write("file", "x"sv);
  EXPECT_THROW(SafetensorsCheckpoint::open((dir.path() / "file").string()), Error);
  EXPECT_TRUE(CheckpointRejects(dir, {"holds neither model.safetensors.index.json nor model.safetensors"}));
  dir.write("model-00001-of-00001.safetensors", shard({"a"}, 0));  // not picked up without an index
  EXPECT_TRUE(CheckpointRejects(dir, {"holds neither"}));
  dir.write("model.safetensors", "\x01\x02"sv);  // a broken single file names itself
  EXPECT_TRUE(CheckpointRejects(dir, {"model.safetensors: safetensors: ", "too short"}));
}

TEST(SafetensorsCheckpoint, MalformedIndex) {
  TempDir dir;
  dir.write("s.safetensors", shard({"a"}, 0));
  auto rejects_index = [&](std::string_view text, std::initializer_list<std::string_view> needles) {
    dir.write(kIndex, text);
    return CheckpointRejects(dir, needles);
  };
  EXPECT_TRUE(rejects_index("", {kIndex, "not valid JSON"}));
  EXPECT_TRUE(rejects_index("{\"weight_map\":{\"a\":\"s.safetensors\"}", {kIndex, "not valid JSON"}));
  EXPECT_TRUE(rejects_index("{\"weight_map\":{\"a\":\"s\xff.safetensors\"}}", {"not valid JSON"}));
  EXPECT_TRUE(rejects_index("[]", {kIndex, "not a JSON object"}));
  EXPECT_TRUE(rejects_index(std::string(100000, '['), {"not a JSON object"}));
  EXPECT_TRUE(rejects_index(R"({"metadata":{}})", {kIndex, "no weight_map"}));
  EXPECT_TRUE(rejects_index(R"({"weight_map":{}})", {"weight_map is empty"}));
  EXPECT_TRUE(rejects_index(R"({"weight_map":["a"]})", {"weight_map is an array, not an object"}));
  EXPECT_TRUE(rejects_index(R"({"weight_map":"s.safetensors"})", {"weight_map is a string"}));
  EXPECT_TRUE(rejects_index(R"({"weight_map":{"a":1}})", {"weight_map entry 'a' is a number, not a file name"}));
  EXPECT_TRUE(rejects_index(R"({"weight_map":{"a":{"f":"s.safetensors"}}})", {"entry 'a' is an object"}));
  EXPECT_TRUE(rejects_index(R"({"weight_map":{"a":"s.safetensors","a":"s.safetensors"}})",
                            {"weight_map names tensor 'a' twice"}));
  EXPECT_TRUE(rejects_index(R"({"weight_map":{"a":"s.safetensors"},"weight_map":{}})", {"duplicate key 'weight_map'"}));
  // Deep content elsewhere in the index is skipped, not built.
  dir.write(kIndex, std::string(R"({"metadata":)") + std::string(100000, '[') + std::string(100000, ']') +
                        R"(,"weight_map":{"a":"s.safetensors"}})");
  EXPECT_EQ(SafetensorsCheckpoint::open(dir.str())->n_files(), 1u);
}

TEST(SafetensorsCheckpoint, ShardNamesStayInTheDirectory) {
  TempDir dir;
  dir.write("s.safetensors", shard({"a"}, 0));
  fs::create_directory(dir.path() / "sub");
  dir.write("sub/t.safetensors", shard({"b"}, 0));
  for (auto name : {"../s.safetensors", "sub/t.safetensors", "/etc/passwd", "sub\\\\t.safetensors", "..", ".", "",
                    "a\\u0000b"}) {
    dir.write(kIndex, index_json({{"a", "s.safetensors"}, {"b", name}}));
    EXPECT_TRUE(CheckpointRejects(dir, {kIndex, "weight_map maps 'b'", "not a plain file name"})) << name;
  }
  dir.write(kIndex, index_json({{"a", "s.safetensors"}, {"b", "sub"}}));  // a directory, not a file
  EXPECT_TRUE(CheckpointRejects(dir, {"shard 'sub' is missing"}));
}

TEST(SafetensorsCheckpoint, IndexDisagreesWithShards) {
  TempDir dir;
  dir.write("s1.safetensors", shard({"a", "b"}, 0));
  dir.write("s2.safetensors", shard({"c"}, 0));
  dir.write(kIndex, index_json({{"a", "s1.safetensors"}, {"z", "missing.safetensors"}}));
  EXPECT_TRUE(CheckpointRejects(dir, {kIndex, "shard 'missing.safetensors' is missing"}));
  dir.write(kIndex, index_json({{"a", "s1.safetensors"}, {"z", "s2.safetensors"}}));
  EXPECT_TRUE(CheckpointRejects(dir, {kIndex, "tensor 'z' is not in its shard 's2.safetensors'"}));
  dir.write(kIndex, index_json({{"a", "s2.safetensors"}, {"c", "s2.safetensors"}, {"b", "s1.safetensors"}}));
  EXPECT_TRUE(CheckpointRejects(dir, {"tensor 'a' is not in its shard 's2.safetensors'"}));
  dir.write("s3.safetensors", shard({"c", "d"}, 0));
  dir.write(kIndex, index_json({{"c", "s2.safetensors"}, {"d", "s3.safetensors"}}));
  EXPECT_TRUE(CheckpointRejects(dir, {"tensor 'c' is in both", "s2.safetensors", "s3.safetensors"}));
  dir.write("bad.safetensors", "\x08\0\0\0\0\0\0\0{\"a\":1} "sv);
  dir.write(kIndex, index_json({{"a", "s1.safetensors"}, {"x", "bad.safetensors"}}));
  EXPECT_TRUE(CheckpointRejects(dir, {"bad.safetensors: safetensors: ", "tensor 'a'"}));
}
