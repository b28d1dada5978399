// The ONNX loader and runtime on hand-made models: malformed files refused with one line,
// graph rewrites (constant folding, Conv + BatchNormalization), sessions reused across shapes.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "base/error.hpp"
#include "minnow/onnx.hpp"
#include "onnx/graph.hpp"
#include "onnx_model_builder.hpp"

using namespace minnow::onnx;
using namespace minnow::test;

namespace {

std::string error_of(const std::vector<uint8_t>& bytes) {
  try {
    Interpreter::from_bytes(bytes);
  } catch (const minnow::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(Onnx, RunsAHandMadeGraph) {
  Msg g;
  g.m(1, node("Mul", {"x", "two"}, {"y"})).m(1, node("Relu", {"y"}, {"z"}));
  g.m(5, float_tensor("two", {}, {2.0f})).m(11, value_info("x", {-1, 3})).m(12, value_info("z", {-1, 3}));
  auto net = Interpreter::from_bytes(model(g));
  ASSERT_EQ(net->inputs().size(), 1u);
  EXPECT_EQ(net->inputs()[0].shape, (std::vector<int64_t>{-1, 3}));
  EXPECT_THROW(net->create_session(), minnow::Error);  // the symbolic dimension needs a shape
  auto s = net->create_session({{"x", {2, 3}}});
  float in[6] = {-1, 0.5f, 2, -3, 4, 0};
  std::copy(in, in + 6, s->input("x").data<float>());
  s->run();
  const Tensor& z = s->output("z");
  ASSERT_EQ(z.shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_FLOAT_EQ(z.data<float>()[1], 1.0f);
  EXPECT_FLOAT_EQ(z.data<float>()[0], 0.0f);
  // Another shape on the same session: inputs may be resized between runs.
  s->input("x").resize(DataType::Float, {1, 3});
  std::copy(in, in + 3, s->input("x").data<float>());
  s->run();
  EXPECT_EQ(s->output("z").shape(), (std::vector<int64_t>{1, 3}));
  EXPECT_FLOAT_EQ(s->output("z").data<float>()[2], 4.0f);
}

TEST(Onnx, PooledBuffersKeepEveryLiveTensor) {
  // a is read again after b and c were made (a skip connection); b feeds a second graph
  // output through e; nothing reads the middle output m2. With buffers passed on from
  // tensors no longer needed, every value must still be its own, run after run.
  Msg g;
  g.m(1, node("Mul", {"x", "two"}, {"a"})).m(1, node("Neg", {"a"}, {"b"})).m(1, node("Abs", {"b"}, {"c"}));
  g.m(1, node("Relu", {"c"}, {"m2"})).m(1, node("Add", {"a", "c"}, {"d"})).m(1, node("Neg", {"d"}, {"y"}));
  g.m(1, node("Mul", {"b", "two"}, {"e"}));
  g.m(5, float_tensor("two", {}, {2.0f})).m(11, value_info("x", {4}));
  g.m(12, value_info("y", {4})).m(12, value_info("e", {4}));
  auto s = Interpreter::from_bytes(model(g))->create_session({}, {.n_threads = 1, .optimize = false});
  for (int run = 0; run < 3; ++run) {
    const float x[4] = {-1.5f, 0.0f, 2.0f + run, 3.25f};
    std::copy(x, x + 4, s->input("x").data<float>());
    s->run();
    for (int i = 0; i < 4; ++i) {
      const float a = 2 * x[i], b = -a, c = std::fabs(b);
      EXPECT_EQ(s->output("y").data<float>()[i], -(a + c)) << run << " " << i;
      EXPECT_EQ(s->output("e").data<float>()[i], 2 * b) << run << " " << i;
      EXPECT_EQ(s->input("x").data<float>()[i], x[i]) << run << " " << i;
    }
  }
}

TEST(Onnx, TensorCopiesTakeTheValuesOnly) {
  Tensor big(DataType::Float, {1000});
  big.resize(DataType::Int8, {3});  // the buffer stays 4000 bytes
  big.data<int8_t>()[0] = 5, big.data<int8_t>()[2] = -7;
  Tensor copy = big, assigned(DataType::Float, {2000});
  assigned = big;
  for (const Tensor* t : {&copy, &assigned}) {
    ASSERT_EQ(t->shape(), (std::vector<int64_t>{3}));
    EXPECT_EQ(t->data<int8_t>()[0], 5);
    EXPECT_EQ(t->data<int8_t>()[2], -7);
  }
}

TEST(Onnx, FoldsConstantsAndBatchNormIntoConv) {
  // y = BN(Conv(x, W + 0)) with the weight computed by an Add of constants.
  Msg g;
  g.m(1, node("Add", {"w0", "zero"}, {"w"}));
  g.m(1, node("Conv", {"x", "w"}, {"c"}));
  g.m(1, node("BatchNormalization", {"c", "scale", "bias", "mean", "var"}, {"y"}));
  g.m(5, float_tensor("w0", {2, 1, 1, 1}, {2, -1})).m(5, float_tensor("zero", {}, {0}));
  g.m(5, float_tensor("scale", {2}, {1, 3})).m(5, float_tensor("bias", {2}, {0.5f, 0}));
  g.m(5, float_tensor("mean", {2}, {1, 0})).m(5, float_tensor("var", {2}, {4, 1}));
  g.m(11, value_info("x", {1, 1, 1, 2})).m(12, value_info("y", {1, 2, 1, 2}));
  auto net = Interpreter::from_bytes(model(g));
  auto opt = net->create_session();
  auto plain = net->create_session({}, {.n_threads = 1, .optimize = false});
  EXPECT_EQ(opt->node_count(), 1u);  // Add folded, BatchNormalization fused
  EXPECT_EQ(plain->node_count(), 3u);
  for (auto* s : {opt.get(), plain.get()}) {
    s->input("x").data<float>()[0] = 1.5f;
    s->input("x").data<float>()[1] = -2.0f;
    s->run();
  }
  const float eps = 1e-5f;
  // channel 0: (2x - 1) / sqrt(4 + eps) + 0.5; channel 1: 3 (-x) / sqrt(1 + eps)
  const float want[4] = {(3.0f - 1) / std::sqrt(4 + eps) + 0.5f, (-4.0f - 1) / std::sqrt(4 + eps) + 0.5f,
                         -4.5f / std::sqrt(1 + eps), 6.0f / std::sqrt(1 + eps)};
  for (int i = 0; i < 4; ++i) {
    EXPECT_NEAR(opt->output("y").data<float>()[i], want[i], 1e-5f) << i;
    EXPECT_NEAR(plain->output("y").data<float>()[i], want[i], 1e-5f) << i;
  }
}

TEST(Onnx, MalformedModelsAreRefusedWithOneLine) {
  Msg g;
  g.m(1, node("Relu", {"x"}, {"y"})).m(11, value_info("x", {1})).m(12, value_info("y", {1}));
  auto good = model(g);
  ASSERT_EQ(error_of(good), "");
  // Every truncation is refused or parsed, never a crash.
  for (size_t n = 0; n < good.size(); ++n) {
    std::vector<uint8_t> cut(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(n));
    std::string e = error_of(cut);
    if (!e.empty()) {
      EXPECT_EQ(e.find('\n'), std::string::npos) << e;
    }
  }
  EXPECT_NE(error_of({}).find("no graph"), std::string::npos);

  Msg cycle;
  cycle.m(1, node("Relu", {"b"}, {"a"})).m(1, node("Relu", {"a"}, {"b"})).m(12, value_info("a", {1}));
  EXPECT_NE(error_of(model(cycle)).find("cycle"), std::string::npos) << error_of(model(cycle));

  Msg missing;
  missing.m(1, node("Relu", {"nowhere"}, {"y"})).m(12, value_info("y", {1}));
  EXPECT_NE(error_of(model(missing)).find("'nowhere' is neither"), std::string::npos);

  Msg unknown;
  unknown.m(1, node("FancyOp", {"x"}, {"y"})).m(11, value_info("x", {1})).m(12, value_info("y", {1}));
  EXPECT_EQ(error_of(model(unknown)), "onnx: node 'y' (FancyOp): operator FancyOp is not supported by minnow");

  Msg absurd;
  absurd.m(5, float_tensor("big", {1 << 30, 1 << 30}, {1})).m(1, node("Relu", {"big"}, {"y"})).m(12, value_info("y", {1}));
  EXPECT_NE(error_of(model(absurd)).find("2^32"), std::string::npos) << error_of(model(absurd));

  Msg short_data;
  short_data.m(5, float_tensor("w", {4}, {1, 2})).m(1, node("Relu", {"w"}, {"y"})).m(12, value_info("y", {4}));
  EXPECT_NE(error_of(model(short_data)).find("raw data holds 8 bytes, its shape needs 16"), std::string::npos);

  Msg twice;
  twice.m(1, node("Relu", {"x"}, {"y"})).m(1, node("Relu", {"x"}, {"y"})).m(11, value_info("x", {1})).m(12, value_info("y", {1}));
  EXPECT_NE(error_of(model(twice)).find("produced twice"), std::string::npos);
}

TEST(Onnx, RuntimeErrorsNameTheNode) {
  Msg g;
  g.m(1, node("Add", {"a", "b"}, {"y"})).m(11, value_info("a", {2, 3})).m(11, value_info("b", {4})).m(12, value_info("y", {2, 3}));
  auto net = Interpreter::from_bytes(model(g));
  auto s = net->create_session();
  try {
    s->run();
    FAIL() << "broadcast of [2,3] and [4] accepted";
  } catch (const minnow::Error& e) {
    EXPECT_NE(std::string(e.what()).find("node 'y' (Add)"), std::string::npos) << e.what();
  }
  EXPECT_THROW(s->input("nope"), minnow::Error);
  EXPECT_THROW(net->create_session({{"nope", {1}}}), minnow::Error);
}

// ConvTranspose whose kernel equals its stride (one tap per output pixel: the GEMM and
// interleave path), with groups and bias, against the definition summed here.
TEST(Onnx, ConvTransposeKernelEqualStride) {
  const int64_t C = 4, group = 2, Mg = 3, IH = 3, IW = 5, S = 2;
  std::vector<float> w(C * Mg * S * S), bias(Mg * group), x(C * IH * IW);
  for (size_t i = 0; i < w.size(); ++i) w[i] = std::sin(0.7f * i);
  for (size_t i = 0; i < bias.size(); ++i) bias[i] = 0.1f * i - 0.2f;
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::cos(0.3f * i);
  Msg strides = Msg().s(1, "strides").i(20, 7).i(8, S).i(8, S);
  Msg groups = Msg().s(1, "group").i(20, 2).i(3, group);
  Msg g;
  g.m(1, node("ConvTranspose", {"x", "w", "b"}, {"y"}).m(5, strides).m(5, groups));
  g.m(5, float_tensor("w", {C, Mg, S, S}, w)).m(5, float_tensor("b", {Mg * group}, bias));
  g.m(11, value_info("x", {1, C, IH, IW})).m(12, value_info("y", {1, Mg * group, IH * S, IW * S}));
  auto s = Interpreter::from_bytes(model(g))->create_session();
  std::copy(x.begin(), x.end(), s->input("x").data<float>());
  s->run();
  const Tensor& y = s->output("y");
  ASSERT_EQ(y.shape(), (std::vector<int64_t>{1, Mg * group, IH * S, IW * S}));
  const int64_t Cg = C / group, OH = IH * S, OW = IW * S;
  for (int64_t m = 0; m < Mg * group; ++m)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        const int64_t gi = m / Mg, ih = oh / S, iw = ow / S;
        float want = bias[m];
        for (int64_t c = 0; c < Cg; ++c)
          want += w[(((gi * Cg + c) * Mg + m % Mg) * S + oh % S) * S + ow % S] * x[((gi * Cg + c) * IH + ih) * IW + iw];
        ASSERT_NEAR(y.data<float>()[(m * OH + oh) * OW + ow], want, 1e-5f) << m << " " << oh << " " << ow;
      }
}

// A 1 x 1 convolution + Clip read only by a depthwise convolution + Relu: the optimizer
// makes one node of all four, which never writes the expanded tensor out; against the
// same graph run node by node (batches, strides, pads, channels not a multiple of 8,
// bands of rows whose edge rows both bands compute).
TEST(Onnx, PointwiseDepthwiseFusionMatchesTheNodes) {
  struct Case {
    int64_t n, k, m, ih, iw, kw, s, pad;
  };
  for (const Case& c : {Case{2, 5, 11, 9, 13, 3, 2, 1}, Case{1, 16, 24, 150, 120, 3, 1, 1}, Case{1, 3, 8, 7, 7, 5, 1, 2},
                        Case{1, 7, 9, 150, 121, 3, 2, 0}}) {
    std::vector<float> w1(c.m * c.k), b1(c.m), wd(c.m * c.kw * c.kw), bd(c.m), x(c.n * c.k * c.ih * c.iw);
    for (size_t i = 0; i < w1.size(); ++i) w1[i] = std::sin(0.37f * i);
    for (size_t i = 0; i < wd.size(); ++i) wd[i] = std::cos(0.23f * i);
    for (size_t i = 0; i < b1.size(); ++i) b1[i] = 0.05f * i - 0.2f, bd[i] = 0.5f - 0.03f * i;
    for (size_t i = 0; i < x.size(); ++i) x[i] = std::cos(0.11f * i);
    Msg g;
    g.m(1, node("Conv", {"x", "w1", "b1"}, {"e"})).m(1, node("Clip", {"e", "lo", "hi"}, {"c"}));
    Msg dw = node("Conv", {"c", "wd", "bd"}, {"d"});
    dw.m(5, Msg().s(1, "strides").i(20, 7).i(8, c.s).i(8, c.s));
    dw.m(5, Msg().s(1, "pads").i(20, 7).i(8, c.pad).i(8, c.pad).i(8, c.pad).i(8, c.pad));
    dw.m(5, Msg().s(1, "group").i(20, 2).i(3, c.m));
    g.m(1, dw).m(1, node("Relu", {"d"}, {"y"}));
    g.m(5, float_tensor("w1", {c.m, c.k, 1, 1}, w1)).m(5, float_tensor("b1", {c.m}, b1));
    g.m(5, float_tensor("wd", {c.m, 1, c.kw, c.kw}, wd)).m(5, float_tensor("bd", {c.m}, bd));
    g.m(5, float_tensor("lo", {}, {0.0f})).m(5, float_tensor("hi", {}, {6.0f}));
    g.m(11, value_info("x", {c.n, c.k, c.ih, c.iw})).m(12, value_info("y", {-1, -1, -1, -1}));
    auto net = Interpreter::from_bytes(model(g));
    auto fused = net->create_session({}, {.n_threads = 2});
    auto plain = net->create_session({}, {.n_threads = 1, .optimize = false});
    EXPECT_EQ(fused->node_count(), 1u);
    for (auto* s : {fused.get(), plain.get()}) {
      std::copy(x.begin(), x.end(), s->input("x").data<float>());
      s->run();
    }
    const Tensor &got = fused->output("y"), &want = plain->output("y");
    ASSERT_EQ(got.shape(), want.shape());
    for (int64_t i = 0; i < want.size(); ++i)
      ASSERT_NEAR(got.data<float>()[i], want.data<float>()[i], 1e-5f * (1 + std::fabs(want.data<float>()[i]))) << i;
  }
  // A depthwise kernel_shape that disagrees with its filters is not fused away: Conv refuses it.
  Msg g;
  Msg dw = node("Conv", {"e", "wd"}, {"y"});
  dw.m(5, Msg().s(1, "group").i(20, 2).i(3, 4)).m(5, Msg().s(1, "kernel_shape").i(20, 7).i(8, 5).i(8, 5));
  g.m(1, node("Conv", {"x", "w1"}, {"e"})).m(1, dw);
  g.m(5, float_tensor("w1", {4, 2, 1, 1}, std::vector<float>(8, 0.5f)));
  g.m(5, float_tensor("wd", {4, 1, 3, 3}, std::vector<float>(36, 0.25f)));
  g.m(11, value_info("x", {1, 2, 6, 6})).m(12, value_info("y", {-1, -1, -1, -1}));
  auto s = Interpreter::from_bytes(model(g))->create_session();
  try {
    s->run();
    FAIL() << "a kernel_shape of 5 x 5 for 3 x 3 filters accepted";
  } catch (const minnow::Error& e) {
    EXPECT_NE(std::string(e.what()).find("kernel_shape differs"), std::string::npos) << e.what();
  }
}

// A 1 x 1 convolution alone becomes MinnowPointwise, its filters packed once by the
// optimizer: the same numbers as Conv without optimization (filter counts that leave a last
// group of 16 half or partly used, pixel counts past a task's 96).
TEST(Onnx, PackedPointwiseMatchesConv) {
  for (int64_t m : {5, 8, 21, 40})
    for (int64_t pixels : {7, 130}) {
      const int64_t k = 6;
      std::vector<float> w(static_cast<size_t>(m * k)), b(static_cast<size_t>(m)), x(static_cast<size_t>(2 * k * pixels));
      for (size_t i = 0; i < w.size(); ++i) w[i] = std::sin(0.37f * i);
      for (size_t i = 0; i < b.size(); ++i) b[i] = 0.05f * i - 0.2f;
      for (size_t i = 0; i < x.size(); ++i) x[i] = std::cos(0.11f * i);
      Msg g;
      g.m(1, node("Conv", {"x", "w", "b"}, {"c"})).m(1, node("Relu", {"c"}, {"y"}));
      g.m(5, float_tensor("w", {m, k, 1, 1}, w)).m(5, float_tensor("b", {m}, b));
      g.m(11, value_info("x", {2, k, 1, pixels})).m(12, value_info("y", {-1, -1, -1, -1}));
      auto net = Interpreter::from_bytes(model(g));
      auto packed = net->create_session({}, {.n_threads = 2});
      auto plain = net->create_session({}, {.n_threads = 1, .optimize = false});
      EXPECT_EQ(packed->node_count(), 1u);
      for (auto* s : {packed.get(), plain.get()}) {
        std::copy(x.begin(), x.end(), s->input("x").data<float>());
        s->run();
      }
      const Tensor &got = packed->output("y"), &want = plain->output("y");
      ASSERT_EQ(got.shape(), want.shape());
      for (int64_t i = 0; i < want.size(); ++i) ASSERT_EQ(got.data<float>()[i], want.data<float>()[i]) << m << " " << pixels << " @" << i;
    }
}

// Conv through the padded stride-phase planes and the depthwise row kernels: several images,
// groups, strides, dilations and asymmetric pads, against the definition summed here (im2col's order, so exact to
// rounding).
TEST(Onnx, ConvMatchesDefinition) {
  struct Case {
    int64_t n, c, m, group, ih, iw, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr;
  };
  const Case cases[] = {{3, 4, 6, 2, 7, 9, 3, 3, 2, 1, 1, 2, 1, 0, 2, 1},
                        {2, 3, 40, 1, 5, 40, 1, 3, 1, 1, 1, 1, 0, 1, 0, 1},
                        {1, 2, 3, 1, 11, 6, 5, 2, 3, 2, 1, 1, 2, 0, 0, 3},
                        // depthwise, 8 channels at a time: strides, windows, a partial group of
                        // channels, several bands of rows; wide planes at stride 1 row by row;
                        // dilated ones tap by tap
                        {2, 6, 6, 6, 7, 9, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1},
                        {1, 4, 4, 4, 5, 30, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
                        {1, 3, 3, 3, 6, 6, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2},
                        {1, 2, 2, 2, 9, 50, 3, 3, 2, 2, 1, 1, 0, 1, 1, 0},
                        {2, 11, 11, 11, 70, 40, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
                        {1, 9, 9, 9, 12, 13, 3, 5, 1, 2, 1, 1, 0, 2, 2, 1},
                        {1, 5, 5, 5, 8, 60, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
                        {1, 4, 4, 4, 9, 9, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2},
                        // pointwise on a small image: filters split into row blocks
                        {2, 8, 64, 1, 3, 3, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0}};
  for (const Case& k : cases) {
    const int64_t cg = k.c / k.group, mg = k.m / k.group;
    const int64_t oh_n = (k.ih + k.pt + k.pb - (k.kh - 1) * k.dh - 1) / k.sh + 1;
    const int64_t ow_n = (k.iw + k.pl + k.pr - (k.kw - 1) * k.dw - 1) / k.sw + 1;
    std::vector<float> w(k.m * cg * k.kh * k.kw), bias(k.m), x(k.n * k.c * k.ih * k.iw);
    for (size_t i = 0; i < w.size(); ++i) w[i] = std::sin(0.37f * i);
    for (size_t i = 0; i < bias.size(); ++i) bias[i] = 0.05f * i;
    for (size_t i = 0; i < x.size(); ++i) x[i] = std::cos(0.11f * i);
    Msg g;
    Msg conv = node("Conv", {"x", "w", "b"}, {"y"});
    conv.m(5, Msg().s(1, "strides").i(20, 7).i(8, k.sh).i(8, k.sw));
    conv.m(5, Msg().s(1, "dilations").i(20, 7).i(8, k.dh).i(8, k.dw));
    conv.m(5, Msg().s(1, "pads").i(20, 7).i(8, k.pt).i(8, k.pl).i(8, k.pb).i(8, k.pr));
    conv.m(5, Msg().s(1, "group").i(20, 2).i(3, k.group));
    g.m(1, conv).m(5, float_tensor("w", {k.m, cg, k.kh, k.kw}, w)).m(5, float_tensor("b", {k.m}, bias));
    g.m(11, value_info("x", {k.n, k.c, k.ih, k.iw})).m(12, value_info("y", {k.n, k.m, oh_n, ow_n}));
    for (int threads : {1, 2}) {
      auto s = Interpreter::from_bytes(model(g))->create_session({}, {.n_threads = threads});
      std::copy(x.begin(), x.end(), s->input("x").data<float>());
      s->run();
      const Tensor& y = s->output("y");
      ASSERT_EQ(y.shape(), (std::vector<int64_t>{k.n, k.m, oh_n, ow_n}));
      for (int64_t b = 0; b < k.n; ++b)
        for (int64_t m = 0; m < k.m; ++m)
          for (int64_t oh = 0; oh < oh_n; ++oh)
            for (int64_t ow = 0; ow < ow_n; ++ow) {
              float acc = 0;
              const int64_t gi = m / mg;
              for (int64_t c = 0; c < cg; ++c)
                for (int64_t i = 0; i < k.kh; ++i)
                  for (int64_t j = 0; j < k.kw; ++j) {
                    const int64_t ih = oh * k.sh - k.pt + i * k.dh, iw = ow * k.sw - k.pl + j * k.dw;
                    const float v = ih < 0 || ih >= k.ih || iw < 0 || iw >= k.iw
                                        ? 0.0f
                                        : x[((b * k.c + gi * cg + c) * k.ih + ih) * k.iw + iw];
                    acc = std::fma(w[((m * cg + c) * k.kh + i) * k.kw + j], v, acc);
                  }
              const float got = y.data<float>()[((b * k.m + m) * oh_n + oh) * ow_n + ow];
              ASSERT_NEAR(got, acc + bias[m], 1e-5f) << "case " << (&k - cases) << " " << b << " " << m << " " << oh << " " << ow;
            }
    }
  }
}
