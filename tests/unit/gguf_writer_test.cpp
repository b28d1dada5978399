// GgufWriter: what it writes, the reader (formats/gguf) reads back exactly; failures
// leave no file behind.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <unistd.h>
#include <filesystem>
#include <vector>

#include "base/error.hpp"
#include "formats/gguf.hpp"
#include "formats/gguf_writer.hpp"

using namespace minnow;
namespace fs = std::filesystem;

namespace {

std::string temp_path(const char* name) {
  return (fs::temp_directory_path() / (std::string("minnow_writer_") + name + "_" + std::to_string(::getpid()))).string();
}

}  // namespace

TEST(GgufWriter, MetadataOfEveryTypeRoundTrips) {
  const std::string path = temp_path("kv.gguf");
  {
    GgufWriter w(path);
    w.set_u8("a.u8", 200);
    w.set_i8("a.i8", -100);
    w.set_u16("a.u16", 60000);
    w.set_i16("a.i16", -30000);
    w.set_u32("a.u32", 4000000000u);
    w.set_i32("a.i32", -2000000000);
    w.set_u64("a.u64", 1ull << 60);
    w.set_i64("a.i64", -(1ll << 60));
    w.set_f32("a.f32", 1.5f);
    w.set_f64("a.f64", 0.1);
    w.set_bool("a.bool", true);
    w.set_string("a.str", "h\xc3\xa9llo");
    const std::vector<std::string> strs{"x", "", "yz"};
    w.set_strings("a.strs", strs);
    const std::vector<int32_t> ints{1, -2, 3};
    w.set_i32s("a.ints", ints);
    const std::vector<float> fl{0.25f};
    w.set_f32s("a.floats", fl);
    w.set_u32("a.u32", 7);  // replacing keeps one key
    w.finish();
  }
  auto f = GgufFile::open(path);
  EXPECT_EQ(f->version(), 3u);
  EXPECT_EQ(f->metadata().size(), 15u);
  EXPECT_EQ(f->find("a.u8")->u, 200u);
  EXPECT_EQ(f->find("a.i8")->i, -100);
  EXPECT_EQ(f->find("a.u16")->u, 60000u);
  EXPECT_EQ(f->find("a.i16")->i, -30000);
  EXPECT_EQ(f->find("a.u32")->u, 7u);
  EXPECT_EQ(f->find("a.i32")->i, -2000000000);
  EXPECT_EQ(f->find("a.u64")->u, 1ull << 60);
  EXPECT_EQ(f->find("a.i64")->i, -(1ll << 60));
  EXPECT_EQ(f->find("a.f32")->f, 1.5);
  EXPECT_EQ(f->find("a.f64")->f, 0.1);
  EXPECT_EQ(f->get_bool("a.bool"), true);
  EXPECT_EQ(f->get_string("a.str"), "h\xc3\xa9llo");
  const auto* s = f->get_array("a.strs", GgufType::STRING);
  ASSERT_TRUE(s);
  ASSERT_EQ(s->count, 3u);
  EXPECT_EQ(s->strings().at(2), "yz");
  const auto* i = f->get_array("a.ints", GgufType::I32);
  ASSERT_TRUE(i);
  EXPECT_EQ(i->ints().at(1), -2);
  EXPECT_EQ(i->elements().at(1).i, -2);
  EXPECT_EQ(f->get_array("a.floats", GgufType::F32)->floats().at(0), 0.25);
  EXPECT_TRUE(f->tensors().empty());
  fs::remove(path);
}

TEST(GgufWriter, CopiesValuesIncludingNestedArrays) {
  const std::string src = temp_path("src.gguf"), dst = temp_path("dst.gguf");
  {
    GgufWriter w(src);
    const std::vector<std::string> strs{"a", "b"};
    w.set_strings("t.s", strs);
    w.set_f64("t.d", -2.5);
    w.finish();
  }
  auto a = GgufFile::open(src);
  // An array of three arrays of two u16 (9, 9), encoded by hand: set_value copies the bytes.
  std::string inner;
  auto put = [&](auto v) { inner.append(reinterpret_cast<const char*>(&v), sizeof v); };
  put(static_cast<uint32_t>(GgufType::U16)), put(uint64_t{2}), put(uint16_t{9}), put(uint16_t{9});
  const std::string encoded = inner + inner + inner;
  GgufValue outer;
  outer.type = GgufType::ARRAY, outer.elem_type = GgufType::ARRAY, outer.count = 3, outer.bytes = encoded;
  {
    GgufWriter w(dst);
    for (const auto& [k, v] : a->metadata()) w.set_value(k, v);
    w.set_value("t.nested", outer);
    w.finish();
  }
  auto b = GgufFile::open(dst);
  EXPECT_EQ(b->get_array("t.s", GgufType::STRING)->strings().at(1), "b");
  EXPECT_EQ(b->find("t.d")->f, -2.5);
  const GgufValue* n = b->find("t.nested");
  ASSERT_TRUE(n);
  const auto outer_read = n->elements();
  ASSERT_EQ(outer_read.size(), 3u);
  EXPECT_EQ(outer_read[2].elements().at(1).u, 9u);
  EXPECT_EQ(outer_read[2].ints(), (std::vector<int64_t>{9, 9}));
  fs::remove(src), fs::remove(dst);
}

TEST(GgufWriter, TensorsAreAlignedAndReadBack) {
  for (uint32_t alignment : {32u, 64u, 4096u}) {
    const std::string path = temp_path("t.gguf");
    std::vector<float> a(3 * 5), b(64);
    for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i);
    for (size_t i = 0; i < b.size(); ++i) b[i] = -static_cast<float>(i);
    {
      GgufWriter w(path);
      w.set_alignment(alignment);
      w.set_string("general.architecture", "test");
      w.add_tensor("a", {5, 3}, DType::F32);
      w.add_tensor("b", {64}, DType::F32);
      w.begin_data();
      w.write_tensor_data(a.data(), 20);  // in pieces
      w.write_tensor_data(reinterpret_cast<const uint8_t*>(a.data()) + 20, a.size() * 4 - 20);
      w.write_tensor_data(b.data(), b.size() * 4);
      w.finish();
    }
    auto f = GgufFile::open(path);
    EXPECT_EQ(f->alignment(), alignment);
    ASSERT_EQ(f->tensors().size(), 2u);
    const GgufTensor* ta = f->find_tensor("a");
    const GgufTensor* tb = f->find_tensor("b");
    EXPECT_EQ(ta->dims, (std::vector<int64_t>{5, 3}));
    EXPECT_EQ(tb->offset % alignment, 0u);
    EXPECT_EQ(std::memcmp(ta->data, a.data(), a.size() * 4), 0);
    EXPECT_EQ(std::memcmp(tb->data, b.data(), b.size() * 4), 0);
    EXPECT_EQ(f->file_size() % alignment, 0u);  // the last tensor is padded too
    fs::remove(path);
  }
}

TEST(GgufWriter, FailureLeavesNoFile) {
  const std::string path = temp_path("fail.gguf");
  {
    GgufWriter w(path);
    w.add_tensor("a", {32}, DType::F32);
    w.add_tensor("b", {32}, DType::F32);
    w.begin_data();
    std::vector<float> x(32);
    w.write_tensor_data(x.data(), 128);
    EXPECT_THROW(w.finish(), Error);  // "b" got nothing
  }
  EXPECT_FALSE(fs::exists(path));
  EXPECT_FALSE(fs::exists(path + ".tmp"));
  {
    GgufWriter w(path);
    w.add_tensor("a", {32}, DType::F32);
    w.begin_data();
    std::vector<float> x(40);
    EXPECT_THROW(w.write_tensor_data(x.data(), 160), Error);  // too many bytes
  }  // unwinding without finish()
  EXPECT_FALSE(fs::exists(path + ".tmp"));
  EXPECT_FALSE(fs::exists(path));
}

TEST(GgufWriter, RejectsBadTensorsAndPaths) {
  GgufWriter w(temp_path("bad.gguf"));
  EXPECT_THROW(w.add_tensor("q", {33}, DType::Q4_0), Error);  // not whole blocks
  EXPECT_THROW(w.add_tensor("z", {0}, DType::F32), Error);
  EXPECT_THROW(w.set_alignment(48), Error);
  w.add_tensor("x", {32}, DType::Q8_0);
  EXPECT_THROW(w.add_tensor("x", {32}, DType::Q8_0), Error);
  EXPECT_EQ(w.tensor_bytes(0), 34u);
  try {
    GgufWriter bad("/nonexistent-dir/x.gguf");
    bad.begin_data();
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-dir/x.gguf.tmp"), std::string::npos) << e.what();
  }
}
