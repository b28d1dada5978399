// The ONNX part of the C API on a hand-made model: names, inputs that change shape between
// runs, outputs as views, and every bad argument refused with a status and one line.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "minnow/minnow.h"
#include "onnx_model_builder.hpp"

using namespace minnow::test;

namespace {

// y = Relu(x * 2), x of shape [N, 3] with N symbolic.
std::string write_model() {
  Msg g;
  g.m(1, node("Mul", {"x", "two"}, {"y0"})).m(1, node("Relu", {"y0"}, {"y"}));
  g.m(5, float_tensor("two", {}, {2.0f})).m(11, value_info("x", {-1, 3})).m(12, value_info("y", {-1, 3}));
  const auto bytes = model(g);
  const std::string path = (std::filesystem::temp_directory_path() / "minnow_onnx_capi_test.onnx").string();
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  return path;
}

}  // namespace

TEST(OnnxCApi, LoadRunAndReshape) {
  const std::string path = write_model();
  minnow_onnx_model* net = nullptr;
  ASSERT_EQ(minnow_onnx_load(path.c_str(), &net), MINNOW_OK) << minnow_last_error();
  ASSERT_EQ(minnow_onnx_n_inputs(net), 1);
  ASSERT_EQ(minnow_onnx_n_outputs(net), 1);
  EXPECT_STREQ(minnow_onnx_input_name(net, 0), "x");
  EXPECT_STREQ(minnow_onnx_output_name(net, 0), "y");
  EXPECT_EQ(minnow_onnx_input_name(net, 1), nullptr);
  EXPECT_EQ(minnow_onnx_output_name(net, -1), nullptr);

  minnow_onnx_session_params p = minnow_onnx_session_params_default();
  p.n_threads = 2;
  minnow_onnx_session* s = nullptr;
  ASSERT_EQ(minnow_onnx_session_create(net, &p, &s), MINNOW_OK) << minnow_last_error();
  minnow_onnx_free(net);  // the session keeps the model

  minnow_onnx_tensor y;
  EXPECT_EQ(minnow_onnx_get_output(s, "y", &y), MINNOW_ERR_INVALID_ARGUMENT);  // not run yet
  EXPECT_EQ(minnow_onnx_run(s), MINNOW_ERR_INVALID_ARGUMENT);                  // x not set
  EXPECT_NE(std::string(minnow_last_error()).find("'x' was not set"), std::string::npos);

  const float x2[6] = {-1, 0.5f, 2, -3, 4, 0};
  const int64_t shape2[2] = {2, 3};
  ASSERT_EQ(minnow_onnx_set_input(s, "x", MINNOW_ONNX_FLOAT, shape2, 2, x2), MINNOW_OK) << minnow_last_error();
  ASSERT_EQ(minnow_onnx_run(s), MINNOW_OK) << minnow_last_error();
  ASSERT_EQ(minnow_onnx_get_output(s, "y", &y), MINNOW_OK) << minnow_last_error();
  EXPECT_EQ(y.dtype, MINNOW_ONNX_FLOAT);
  ASSERT_EQ(y.rank, 2);
  EXPECT_EQ(y.shape[0], 2);
  EXPECT_EQ(y.shape[1], 3);
  ASSERT_EQ(y.n_elements, 6);
  const float want2[6] = {0, 1, 4, 0, 8, 0};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(static_cast<const float*>(y.data)[i], want2[i]) << i;

  // Another batch size on the same session.
  const float x1[3] = {1, -1, 3};
  const int64_t shape1[2] = {1, 3};
  ASSERT_EQ(minnow_onnx_set_input(s, "x", MINNOW_ONNX_FLOAT, shape1, 2, x1), MINNOW_OK) << minnow_last_error();
  ASSERT_EQ(minnow_onnx_run(s), MINNOW_OK) << minnow_last_error();
  ASSERT_EQ(minnow_onnx_get_output(s, "y", &y), MINNOW_OK);
  EXPECT_EQ(y.shape[0], 1);
  EXPECT_EQ(static_cast<const float*>(y.data)[2], 6.0f);
  minnow_onnx_session_free(s);
  std::remove(path.c_str());
}

TEST(OnnxCApi, BadArgumentsAreRefused) {
  minnow_onnx_model* net = nullptr;
  EXPECT_EQ(minnow_onnx_load(nullptr, &net), MINNOW_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(minnow_onnx_load("/nonexistent/model.onnx", &net), MINNOW_ERR_LOAD);
  EXPECT_EQ(net, nullptr);
  EXPECT_NE(std::string(minnow_last_error()), "");
  EXPECT_EQ(minnow_onnx_n_inputs(nullptr), 0);
  minnow_onnx_session* s = nullptr;
  EXPECT_EQ(minnow_onnx_session_create(nullptr, nullptr, &s), MINNOW_ERR_INVALID_ARGUMENT);

  const std::string path = write_model();
  ASSERT_EQ(minnow_onnx_load(path.c_str(), &net), MINNOW_OK) << minnow_last_error();
  minnow_onnx_session_params p = minnow_onnx_session_params_default();
  p.n_threads = -1;
  EXPECT_EQ(minnow_onnx_session_create(net, &p, &s), MINNOW_ERR_INVALID_ARGUMENT);
  ASSERT_EQ(minnow_onnx_session_create(net, nullptr, &s), MINNOW_OK);
  const float x[3] = {1, 2, 3};
  const int64_t shape[2] = {1, 3}, negative[2] = {-1, 3};
  EXPECT_EQ(minnow_onnx_set_input(s, "nope", MINNOW_ONNX_FLOAT, shape, 2, x), MINNOW_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(minnow_last_error()).find("no input 'nope'"), std::string::npos);
  EXPECT_EQ(minnow_onnx_set_input(s, "x", MINNOW_ONNX_INT64, shape, 2, x), MINNOW_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(minnow_onnx_set_input(s, "x", 42, shape, 2, x), MINNOW_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(minnow_onnx_set_input(s, "x", MINNOW_ONNX_FLOAT, negative, 2, x), MINNOW_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(minnow_onnx_set_input(s, "x", MINNOW_ONNX_FLOAT, shape, 2, nullptr), MINNOW_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(minnow_onnx_set_input(s, "x", MINNOW_ONNX_FLOAT, nullptr, 2, x), MINNOW_ERR_INVALID_ARGUMENT);
  ASSERT_EQ(minnow_onnx_set_input(s, "x", MINNOW_ONNX_FLOAT, shape, 2, x), MINNOW_OK);
  ASSERT_EQ(minnow_onnx_run(s), MINNOW_OK) << minnow_last_error();
  minnow_onnx_tensor y;
  EXPECT_EQ(minnow_onnx_get_output(s, "x", &y), MINNOW_ERR_INVALID_ARGUMENT);  // an input, not an output
  EXPECT_EQ(minnow_onnx_get_output(s, "y", nullptr), MINNOW_ERR_INVALID_ARGUMENT);
  minnow_onnx_session_free(s);
  minnow_onnx_free(net);
  EXPECT_EQ(minnow_onnx_run(s), MINNOW_ERR_INVALID_ARGUMENT);  // freed
  std::remove(path.c_str());
}

// A refused set_input leaves the input as it was (unset, or its last shape and values); the
// outputs of a failed run are not handed out, and the next good run brings them back.
TEST(OnnxCApi, RefusedInputsAndFailedRunsLeaveNothingHalfDone) {
  Msg g;  // y = x * w, w of shape [3]: an x of another width cannot broadcast
  g.m(1, node("Mul", {"x", "w"}, {"y"}));
  g.m(5, float_tensor("w", {3}, {1.0f, 2.0f, 3.0f})).m(11, value_info("x", {-1, -1})).m(12, value_info("y", {-1, 3}));
  const auto bytes = model(g);
  const std::string path = (std::filesystem::temp_directory_path() / "minnow_onnx_capi_fail_test.onnx").string();
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  minnow_onnx_model* net = nullptr;
  ASSERT_EQ(minnow_onnx_load(path.c_str(), &net), MINNOW_OK) << minnow_last_error();
  minnow_onnx_session* s = nullptr;
  ASSERT_EQ(minnow_onnx_session_create(net, nullptr, &s), MINNOW_OK) << minnow_last_error();

  const float x[8] = {1, 1, 1, 2, 2, 2, 3, 3};
  const int64_t good[2] = {1, 3}, two_rows[2] = {2, 3}, wide[2] = {2, 4}, negative[2] = {-2, 3};
  EXPECT_EQ(minnow_onnx_set_input(s, "x", MINNOW_ONNX_FLOAT, negative, 2, x), MINNOW_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(minnow_onnx_run(s), MINNOW_ERR_INVALID_ARGUMENT);  // still unset
  EXPECT_NE(std::string(minnow_last_error()).find("'x' was not set"), std::string::npos) << minnow_last_error();

  ASSERT_EQ(minnow_onnx_set_input(s, "x", MINNOW_ONNX_FLOAT, good, 2, x), MINNOW_OK) << minnow_last_error();
  EXPECT_EQ(minnow_onnx_set_input(s, "x", MINNOW_ONNX_FLOAT, two_rows, 2, nullptr), MINNOW_ERR_INVALID_ARGUMENT);
  ASSERT_EQ(minnow_onnx_run(s), MINNOW_OK) << minnow_last_error();
  minnow_onnx_tensor y;
  ASSERT_EQ(minnow_onnx_get_output(s, "y", &y), MINNOW_OK) << minnow_last_error();
  EXPECT_EQ(y.shape[0], 1);  // the refused [2, 3] changed nothing
  EXPECT_EQ(static_cast<const float*>(y.data)[2], 3.0f);

  EXPECT_EQ(minnow_onnx_set_input(s, "x", MINNOW_ONNX_FLOAT, two_rows, 2, nullptr), MINNOW_ERR_INVALID_ARGUMENT);
  ASSERT_EQ(minnow_onnx_set_input(s, "x", MINNOW_ONNX_FLOAT, wide, 2, x), MINNOW_OK) << minnow_last_error();
  EXPECT_NE(minnow_onnx_run(s), MINNOW_OK);
  EXPECT_EQ(minnow_onnx_get_output(s, "y", &y), MINNOW_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(minnow_last_error()).find("the last run failed"), std::string::npos) << minnow_last_error();

  ASSERT_EQ(minnow_onnx_set_input(s, "x", MINNOW_ONNX_FLOAT, two_rows, 2, x), MINNOW_OK) << minnow_last_error();
  ASSERT_EQ(minnow_onnx_run(s), MINNOW_OK) << minnow_last_error();
  ASSERT_EQ(minnow_onnx_get_output(s, "y", &y), MINNOW_OK) << minnow_last_error();
  EXPECT_EQ(y.shape[0], 2);
  EXPECT_EQ(static_cast<const float*>(y.data)[5], 6.0f);  // 2 * 3
  minnow_onnx_session_free(s);
  minnow_onnx_free(net);
  std::remove(path.c_str());
}
