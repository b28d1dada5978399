// The ONNX backend node tests (written by tests/reference/gen_onnx_node_tests.py into
// build/onnx-node, or MINNOW_ONNX_NODE_TESTS): every case whose operators minnow implements
// is run and compared with the expected outputs at the case's own tolerance. A case minnow
// refuses with a clean error (an element type or attribute it lacks) is counted, not
// failed; a wrong number fails the test. MINNOW_ONNX_TABLE=path writes the per-operator table.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "base/error.hpp"
#include "minnow/onnx.hpp"
#include "onnx/graph.hpp"
#include "onnx/ops/op.hpp"

namespace fs = std::filesystem;
using namespace minnow::onnx;

namespace {

std::vector<uint8_t> read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

double value_at(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DataType::Float: return t.data<float>()[i];
    case DataType::Double: return t.data<double>()[i];
    case DataType::Int32: return t.data<int32_t>()[i];
    case DataType::Int64: return static_cast<double>(t.data<int64_t>()[i]);
    case DataType::UInt8: return t.data<uint8_t>()[i];
    case DataType::Int8: return t.data<int8_t>()[i];
    case DataType::Bool: return t.data<bool>()[i];
    default: return 0;
  }
}

// numpy.testing.assert_allclose: |actual - expected| <= atol + rtol * |expected|, NaNs equal.
std::string compare(const Tensor& got, const Tensor& want, double rtol, double atol) {
  if (got.dtype() != want.dtype()) return std::string("type ") + dtype_name(got.dtype()) + " != " + dtype_name(want.dtype());
  if (got.shape() != want.shape()) return "shape " + got.shape_string() + " != " + want.shape_string();
  for (int64_t i = 0; i < got.size(); ++i) {
    double a = value_at(got, i), b = value_at(want, i);
    if (std::isnan(a) && std::isnan(b)) continue;
    if (a == b) continue;
    if (!(std::abs(a - b) <= atol + rtol * std::abs(b)))
      return "element " + std::to_string(i) + ": " + std::to_string(a) + " != " + std::to_string(b);
  }
  return "";
}

struct OpCount {
  int cases = 0, passed = 0, refused = 0, failed = 0;
};

fs::path node_tests_dir() {
  if (const char* d = std::getenv("MINNOW_ONNX_NODE_TESTS")) return d;
  return fs::path(MINNOW_SOURCE_DIR) / "build/onnx-node";
}

}  // namespace

TEST(OnnxConformance, NodeTests) {
  const fs::path root = node_tests_dir();
  if (!fs::exists(root)) GTEST_SKIP() << "no node tests: .venv/bin/python tests/reference/gen_onnx_node_tests.py build/onnx-node";
  std::vector<fs::path> cases;
  for (auto& e : fs::directory_iterator(root))
    if (fs::exists(e.path() / "meta.json")) cases.push_back(e.path());
  std::sort(cases.begin(), cases.end());
  std::map<std::string, OpCount> per_op;
  std::vector<std::string> failures;
  int run = 0;
  for (const auto& dir : cases) {
    auto meta = nlohmann::json::parse(read_file(dir / "meta.json"));
    std::vector<std::string> ops = meta["op_types"];
    bool supported = meta.value("tensors_only", true);
    for (auto& op : ops) supported = supported && (op == "Constant" || find_op(op));
    if (!supported || ops.empty()) continue;
    // Attribute the case to its last listed non-Constant operator (cases test one operator).
    std::string op = ops.back() == "Constant" && ops.size() > 1 ? ops.front() : ops.back();
    OpCount& count = per_op[op];
    ++count.cases;
    ++run;
    const std::string name = dir.filename().string();
    try {
      auto model_bytes = read_file(dir / "model.onnx");
      auto net = Interpreter::from_bytes(model_bytes);
      std::map<std::string, std::vector<int64_t>> shapes;
      std::vector<Tensor> inputs;
      const fs::path data = dir / "test_data_set_0";
      for (size_t i = 0; i < net->inputs().size(); ++i) {
        auto bytes = read_file(data / ("input_" + std::to_string(i) + ".pb"));
        inputs.push_back(parse_tensor(bytes));
        shapes[net->inputs()[i].name] = inputs.back().shape();
      }
      auto session = net->create_session(shapes, {.n_threads = 1});
      for (size_t i = 0; i < inputs.size(); ++i) session->input(net->inputs()[i].name) = inputs[i];
      session->run();
      std::string problem;
      for (size_t i = 0; i < net->outputs().size() && problem.empty(); ++i) {
        auto bytes = read_file(data / ("output_" + std::to_string(i) + ".pb"));
        Tensor want = parse_tensor(bytes);
        problem = compare(session->output(net->outputs()[i].name), want, meta["rtol"], meta["atol"]);
        if (!problem.empty()) problem = "output " + std::to_string(i) + ": " + problem;
      }
      if (problem.empty()) {
        ++count.passed;
      } else {
        ++count.failed;
        failures.push_back(name + ": " + problem);
      }
    } catch (const minnow::Error& e) {
      ++count.refused;
      if (std::getenv("MINNOW_ONNX_VERBOSE")) std::fprintf(stderr, "refused %s: %s\n", name.c_str(), e.what());
    }
  }
  int passed = 0, refused = 0;
  for (auto& [op, c] : per_op) {
    passed += c.passed;
    refused += c.refused;
  }
  std::printf("ONNX node tests: %d cases of minnow's operators: %d passed, %d refused, %zu wrong\n", run, passed, refused,
              failures.size());
  if (const char* table = std::getenv("MINNOW_ONNX_TABLE")) {
    std::ofstream t(table);
    t << "| operator | cases | passed | refused (type or attribute minnow lacks) | wrong |\n|---|---|---|---|---|\n";
    for (auto& [op, c] : per_op)
      t << "| " << op << " | " << c.cases << " | " << c.passed << " | " << c.refused << " | " << c.failed << " |\n";
  }
  for (auto& f : failures) ADD_FAILURE() << f;
  EXPECT_GT(passed, 0);
}
