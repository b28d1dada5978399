// minnow onnx: inspect and run ONNX models (CNNs and the like) through the general runtime.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>

#include "base/error.hpp"
#include "cli/common.hpp"
#include "minnow/onnx.hpp"
#include "onnx/npy.hpp"
#include "onnx/ops/op.hpp"

namespace minnow::cli {
namespace {

using namespace minnow::onnx;

std::string shape_text(const std::vector<int64_t>& s) {
  std::string t = "[";
  for (size_t i = 0; i < s.size(); ++i) t += (i ? "," : "") + (s[i] < 0 ? std::string("?") : std::to_string(s[i]));
  return t + "]";
}

// "name=1,3,224,224"
std::pair<std::string, std::vector<int64_t>> parse_shape(const std::string& arg) {
  auto eq = arg.rfind('=');
  if (eq == std::string::npos || eq == 0) throw Error("onnx: --shape wants NAME=D,D,...: '" + arg + "'");
  std::vector<int64_t> dims;
  std::string rest = arg.substr(eq + 1);
  size_t pos = 0;
  while (pos <= rest.size()) {
    size_t comma = rest.find(',', pos);
    std::string d = rest.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    if (d.empty() || d.size() > 9 || d.find_first_not_of("0123456789") != std::string::npos)
      throw Error("onnx: --shape '" + arg + "': '" + d + "' is not a dimension");
    dims.push_back(std::stoll(d));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return {arg.substr(0, eq), dims};
}

void fill_random(Tensor& t, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  if (t.dtype() == DataType::Float)
    for (int64_t i = 0; i < t.size(); ++i) t.data<float>()[i] = u(rng);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

void register_onnx(CLI::App& app) {
  auto* cmd = app.add_subcommand("onnx", "Inspect and run ONNX models (CNNs, OCR, classifiers) with minnow's general runtime");
  cmd->require_subcommand(1);

  auto info_path = std::make_shared<std::string>();
  auto* info = cmd->add_subcommand("info", "Print a model's inputs, outputs, opset and operators");
  info->add_option("model", *info_path, "ONNX model file")->required();
  info->callback([info_path] {
    auto net = Interpreter::load(*info_path);
    std::printf("opset %lld, %zu nodes\n", static_cast<long long>(net->opset()), net->node_count());
    for (auto& in : net->inputs()) std::printf("input  %s %s %s\n", in.name.c_str(), dtype_name(in.dtype), shape_text(in.shape).c_str());
    for (auto& out : net->outputs())
      std::printf("output %s %s %s\n", out.name.c_str(), dtype_name(out.dtype), shape_text(out.shape).c_str());
  });

  auto* ops = cmd->add_subcommand("ops", "List the ONNX operators minnow implements");
  ops->callback([] {
    for (auto op : supported_ops()) std::printf("%.*s\n", static_cast<int>(op.size()), op.data());
  });

  struct RunOpts {
    std::string model, save;
    std::vector<std::string> inputs, shapes;
    int threads = 0, runs = 1, warmup = 0;
    bool profile = false, no_optimize = false;
  };
  auto o = std::make_shared<RunOpts>();
  auto* run = cmd->add_subcommand("run", "Run a model on .npy inputs (or random ones) and report the time");
  run->footer(
      "Inputs not given as files are filled with uniform random floats in [0, 1).\n"
      "Examples:\n"
      "  minnow onnx run det.onnx --shape x=1,3,640,640 --runs 10 -t 2\n"
      "  minnow onnx run cls.onnx --input x=image.npy --save out/      # out/<output>.npy\n"
      "  minnow onnx run rec.onnx --shape x=1,3,48,320 --runs 5 --profile");
  run->add_option("model", o->model, "ONNX model file")->required();
  run->add_option("--input", o->inputs, "NAME=FILE.npy: an input's values (its shape comes from the file)");
  run->add_option("--shape", o->shapes, "NAME=D,D,...: an input's shape where the model leaves it open");
  run->add_option("-t,--threads", o->threads, "Threads (default: one per core)");
  run->add_option("--runs", o->runs, "Timed runs (default 1)")->check(CLI::Range(1, 100000));
  run->add_option("--warmup", o->warmup, "Untimed runs first (default 0)")->check(CLI::Range(0, 1000));
  run->add_option("--save", o->save, "Write every output to DIR/<name>.npy");
  run->add_flag("--profile", o->profile, "Print the time of every node, slowest first");
  run->add_flag("--no-optimize", o->no_optimize, "Skip constant folding and Conv + BatchNormalization fusion");
  run->callback([o] {
    auto t_load = std::chrono::steady_clock::now();
    auto net = Interpreter::load(o->model);
    std::map<std::string, std::vector<int64_t>> shapes;
    std::map<std::string, Tensor> given;
    for (auto& s : o->shapes) shapes.insert(parse_shape(s));
    for (auto& arg : o->inputs) {
      auto eq = arg.find('=');
      if (eq == std::string::npos || eq == 0) throw Error("onnx: --input wants NAME=FILE.npy: '" + arg + "'");
      Tensor t = read_npy(arg.substr(eq + 1));
      shapes[arg.substr(0, eq)] = t.shape();
      given[arg.substr(0, eq)] = std::move(t);
    }
    onnx::SessionOptions so{.n_threads = o->threads, .profile = o->profile, .optimize = !o->no_optimize};
    auto session = net->create_session(shapes, so);
    const double load_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t_load).count();
    std::mt19937 rng(1);
    for (auto& name : session->input_names()) {
      Tensor& in = session->input(name);
      if (auto it = given.find(name); it != given.end()) {
        if (it->second.dtype() != in.dtype())
          throw Error("onnx: input '" + name + "' must be " + dtype_name(in.dtype()) + ", the file holds " +
                      dtype_name(it->second.dtype()));
        in = it->second;
      } else {
        fill_random(in, rng);
      }
    }
    for (int i = 0; i < o->warmup; ++i) session->run();
    std::vector<double> ms;
    for (int i = 0; i < o->runs; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      session->run();
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    std::printf("loaded in %.1f ms (%zu nodes, %zu after optimization)\n", load_ms, net->node_count(), session->node_count());
    for (auto& name : session->output_names()) {
      const Tensor& t = session->output(name);
      std::printf("output %s %s %s\n", name.c_str(), dtype_name(t.dtype()), t.shape_string().c_str());
      if (!o->save.empty()) {
        std::filesystem::create_directories(o->save);
        std::string safe = name;
        for (char& c : safe)
          if (c == '/' || c == '\\') c = '_';
        write_npy(o->save + "/" + safe + ".npy", t);
      }
    }
    std::printf("run: median %.2f ms, min %.2f ms over %d runs\n", median(ms), *std::min_element(ms.begin(), ms.end()),
                o->runs);
    if (o->profile) {
      auto times = session->profile();
      double total = 0;
      for (auto& t : times) total += t.ms;
      std::sort(times.begin(), times.end(), [](auto& a, auto& b) { return a.ms > b.ms; });
      std::map<std::string, double> per_op;
      for (auto& t : times) per_op[t.op_type] += t.ms;
      std::printf("per operator type (ms per run, share):\n");
      std::vector<std::pair<double, std::string>> ops;
      for (auto& [op, t] : per_op) ops.push_back({t, op});
      std::sort(ops.rbegin(), ops.rend());
      const int runs = session->runs();
      for (auto& [t, op] : ops) std::printf("  %-22s %9.3f  %5.1f%%\n", op.c_str(), t / runs, 100 * t / std::max(total, 1e-9));
      std::printf("every node, slowest first:\n");
      for (size_t i = 0; i < times.size(); ++i)
        std::printf("  %-40s %-18s %9.3f  -> %s\n", times[i].node.c_str(), times[i].op_type.c_str(), times[i].ms / runs,
                    times[i].output_shape.c_str());
    }
  });
}

}  // namespace minnow::cli
