// minnow pack files (docs/pack.md): sizes agree between the reader's table and the kernels,
// a packed model gives the logits of its GGUF bit for bit and copies no weight, and files
// packed for another layout or version, misaligned or truncated are refused in one line.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "base/error.hpp"
#include "formats/gguf.hpp"
#include "formats/gguf_writer.hpp"
#include "kernels/packed.hpp"
#include "minnow/llm.hpp"
#include "models/model.hpp"
#include "models/packed_gguf.hpp"
#include "models/write_packed.hpp"
#include "tensor/packed_types.hpp"

namespace {

namespace fs = std::filesystem;
using minnow::DType;
const std::string kRoot = MINNOW_SOURCE_DIR;
constexpr DType kPackable[] = {DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1,
                               DType::Q8_0, DType::Q4_K, DType::Q5_K, DType::Q6_K};

std::string temp_path(const std::string& name) {
  return (fs::temp_directory_path() / ("minnow_pack_" + name + "_" + std::to_string(::getpid()) + ".gguf")).string();
}

std::vector<uint8_t> read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(PackedFile, ReaderSizesMatchTheKernels) {
  for (DType t : kPackable) {
    EXPECT_EQ(minnow::packed_base_type(minnow::packed_type_id(t)), t);
    for (int64_t rows : {1, 7, 8, 9, 17, 576})
      for (int64_t cols : {256, 512, 1536})
        EXPECT_EQ(minnow::packed_matrix_bytes(t, rows, cols), minnow::kernels::packed_bytes(t, rows, cols))
            << minnow::dtype_name(t) << " " << rows << "x" << cols;
  }
  EXPECT_FALSE(minnow::packed_base_type(static_cast<uint32_t>(DType::Q4_0)));
  EXPECT_FALSE(minnow::packed_base_type(minnow::kPackedTypeIdOffset + static_cast<uint32_t>(DType::F16)));
}

// A one-matrix packed file (9 rows of Q4_0: two groups, the second padded), written with
// the given layout keys and alignment; returns its bytes.
struct Knobs {
  const char* layout = minnow::kernels::kPackedLayoutName;
  int64_t version = minnow::kernels::kPackedLayoutVersion;
  uint32_t alignment = 64;
  bool keys = true;
};
std::vector<uint8_t> tiny_packed(const Knobs& k) {
  const std::string path = temp_path("tiny");
  {
    minnow::GgufWriter w(path);
    w.set_string("general.architecture", "llama");
    w.set_alignment(k.alignment);
    if (k.keys) {
      w.set_string(minnow::kPackLayoutKey, k.layout);
      w.set_i64(minnow::kPackVersionKey, k.version);
    }
    const size_t i = w.add_packed_tensor("blk.0.attn_q.weight", {64, 9}, DType::Q4_0);
    w.begin_data();
    std::vector<uint8_t> bytes(w.tensor_bytes(i), 0x11);
    w.write_tensor_data(bytes.data(), bytes.size());
    w.finish();
  }
  auto bytes = read_all(path);
  fs::remove(path);
  return bytes;
}

std::string refusal(const std::vector<uint8_t>& bytes) {
  try {
    auto f = minnow::GgufFile::parse(bytes.data(), bytes.size());
    minnow::check_packed_gguf(*f);
  } catch (const minnow::Error& e) {
    return e.what();
  }
  return "";
}

TEST(PackedFile, TinyFileParsesAndChecks) {
  const auto bytes = tiny_packed({});
  auto f = minnow::GgufFile::parse(bytes.data(), bytes.size());
  ASSERT_EQ(f->tensors().size(), 1u);
  const auto& t = f->tensors()[0];
  EXPECT_TRUE(t.packed);
  EXPECT_EQ(t.type, DType::Q4_0);
  EXPECT_EQ(t.n_bytes, minnow::kernels::packed_bytes(DType::Q4_0, 9, 64));
  const auto info = minnow::check_packed_gguf(*f);
  EXPECT_EQ(info.layout, "rows8");
  EXPECT_EQ(info.version, 1);
  EXPECT_EQ(info.n_packed, 1u);
}

TEST(PackedFile, RefusesOtherLayoutsInOneLine) {
  const std::string other = refusal(tiny_packed({.layout = "rows16"}));
  EXPECT_NE(other.find("packed for layout 'rows16', but this minnow reads 'rows8' v1"), std::string::npos) << other;
  const std::string version = refusal(tiny_packed({.version = 2}));
  EXPECT_NE(version.find("v2, but this minnow reads v1"), std::string::npos) << version;
  const std::string keyless = refusal(tiny_packed({.keys = false}));
  EXPECT_NE(keyless.find("1 packed tensors but no 'minnow.pack.layout'"), std::string::npos) << keyless;
  const std::string aligned = refusal(tiny_packed({.alignment = 32}));
  EXPECT_NE(aligned.find("general.alignment 32 is not a multiple of 64"), std::string::npos) << aligned;
  for (const std::string& e : {other, version, keyless, aligned}) EXPECT_EQ(e.find('\n'), std::string::npos) << e;
}

TEST(PackedFile, RefusesTruncatedAndCorruptFiles) {
  const auto bytes = tiny_packed({});
  for (size_t n : {bytes.size() - 1, bytes.size() - 100, bytes.size() / 2, size_t{24}}) {
    const std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + static_cast<ptrdiff_t>(n));
    EXPECT_NE(refusal(cut), "") << n << " of " << bytes.size() << " bytes";
  }
  // The type id of a packed F16 (no packed layout): refused as an unknown type.
  auto bad = bytes;
  const uint32_t packed_q4_0 = minnow::packed_type_id(DType::Q4_0), packed_f16 = minnow::kPackedTypeIdOffset + 1;
  for (size_t i = 0; i + 4 <= bad.size(); ++i)
    if (std::memcmp(&bad[i], &packed_q4_0, 4) == 0) {
      std::memcpy(&bad[i], &packed_f16, 4);
      break;
    }
  EXPECT_NE(refusal(bad).find("unknown type id 1025"), std::string::npos) << refusal(bad);
}

// Packs `file`, then: every matrix the GGUF copies at load is mapped from the packed file
// instead (no anonymous copy), and the logits of every position are equal bit for bit.
void check_packed_model(const std::string& file, std::vector<int32_t> tokens, bool also_int8) {
  if (!fs::exists(file)) GTEST_SKIP() << file << " is missing (make models)";
  const std::string packed = temp_path(fs::path(file).stem().string());
  const minnow::PackStats s = minnow::write_packed_gguf(file, packed);
  EXPECT_GT(s.n_packed, 0u);
  auto a = minnow::Model::load(file), b = minnow::Model::load(packed);
  EXPECT_NE(a->impl().packed, nullptr);
  EXPECT_EQ(b->impl().packed, nullptr) << "the packed file's weights were copied at load";
  EXPECT_EQ(b->impl().pack_layout, "rows8 v1");
  EXPECT_THROW(minnow::write_packed_gguf(packed, packed + ".again"), minnow::Error);
  for (bool int8 : {false, true}) {
    if (int8 && !also_int8) continue;
    minnow::SessionOptions so{.ctx = 64, .threads = 2};
    so.int8_decode = int8;
    minnow::Session sa(*a, so), sb(*b, so);
    std::vector<std::vector<float>> la;
    sa.eval_all(tokens, [&](int, std::span<const float> l) { la.emplace_back(l.begin(), l.end()); });
    int pos = 0;
    sb.eval_all(tokens, [&](int p, std::span<const float> l) {
      ASSERT_EQ(std::memcmp(la[static_cast<size_t>(p)].data(), l.data(), l.size_bytes()), 0) << "position " << p;
      ++pos;
    });
    EXPECT_EQ(pos, static_cast<int>(tokens.size()));
  }
  fs::remove(packed);
}

TEST(PackedFile, SmolLM2LogitsBitForBit) {
  check_packed_model(kRoot + "/models/SmolLM2-135M-Instruct.Q4_1.gguf", {1, 504, 3458, 282, 4649, 314, 19556, 905, 30}, true);
}

TEST(PackedFile, Gemma3KQuantsLogitsBitForBit) {  // Q4_K, Q5_K, Q6_K, Q8_0 matrices
  check_packed_model(kRoot + "/models/gemma-3-270m-Q4_K_M.gguf", {2, 818, 5279, 529, 7001, 563}, false);
}

}  // namespace
