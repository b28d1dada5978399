// minnow bench: load time, time to first token, prefill and decode speed, peak RSS.
// Medians over repetitions; prompt tokens are fixed pseudo-random ids.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/common.hpp"
#include "kernels/ops.hpp"
#include "models/model.hpp"

namespace minnow::cli {
namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double peak_rss_mb() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

// Resident memory now, split as /proc/self/smaps_rollup does: anonymous (heap, KV cache,
// copies; charged to the app) and the rest (file-backed pages the kernel can drop and re-read).
struct Resident {
  double anon_mb = -1, file_mb = -1;
};
Resident resident() {
  Resident r;
  std::FILE* f = std::fopen("/proc/self/smaps_rollup", "r");
  if (!f) return r;
  char line[256];
  double rss = -1, anon = -1;
  while (std::fgets(line, sizeof line, f)) {
    double kb;
    if (std::sscanf(line, "Rss: %lf kB", &kb) == 1) rss = kb;
    else if (std::sscanf(line, "Anonymous: %lf kB", &kb) == 1) anon = kb;
  }
  std::fclose(f);
  if (rss >= 0 && anon >= 0) r = {anon / 1024.0, (rss - anon) / 1024.0};
  return r;
}

}  // namespace

void register_bench(CLI::App& app) {
  struct Opts {
    ModelFlags model;
    int n_prompt = 128, n_gen = 64, reps = 5;
    bool json = false;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("bench", "Measure load time, time to first token, prefill and decode tokens/s, peak RSS");
  add_model_flags(*cmd, o->model);
  cmd->add_option("-p,--n-prompt", o->n_prompt, "Prompt tokens")->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("-n,--n-gen", o->n_gen, "Generated tokens")->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("-r,--repetitions", o->reps, "Repetitions (medians are reported)")->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_flag("--json", o->json, "Print one JSON object");
  cmd->callback([o] {
    auto t0 = std::chrono::steady_clock::now();
    auto model = load_model_or_throw(o->model.model);
    double load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const Resident after_load = resident();
    SessionOptions so = session_options(o->model);
    so.ctx = std::max(so.ctx, o->n_prompt + o->n_gen + 1);
    Session session(*model, so);
    if (o->n_prompt + o->n_gen >= session.context_size())
      throw std::runtime_error("-p + -n exceed the context size " + std::to_string(session.context_size()));
    std::vector<int32_t> prompt(static_cast<size_t>(o->n_prompt));
    uint64_t x = 12345;
    for (auto& id : prompt) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      id = static_cast<int32_t>((x >> 33) % static_cast<uint64_t>(model->info().vocab_size));
    }
    GenerateOptions g;
    g.max_tokens = o->n_gen;
    g.sampling.temperature = 0;
    g.stop_at_end_of_generation = false;
    std::vector<double> ttft, pp, tg;
    for (int rep = -1; rep < o->reps; ++rep) {  // rep -1 warms caches and page mappings
      session.reset();
      auto start = std::chrono::steady_clock::now();
      double first = 0;
      GenerateResult r = session.generate(prompt, g, [&](std::string_view, int32_t) {
        if (first == 0) first = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        return true;
      });
      if (rep < 0) continue;
      ttft.push_back(first);
      pp.push_back(r.n_prompt / r.prompt_seconds);
      // The first generated token is sampled from the prefill logits; decode made the rest.
      tg.push_back((r.n_generated - 1) / std::max(r.generate_seconds, 1e-9));
    }
    const Resident after_run = resident();  // the KV cache and scratch are written by now
    // The cache's pages cost memory only once written: n_prompt + n_gen positions of K and V.
    const ModelConfig& mc = model->impl().config;
    const double per_value = so.kv_type == SessionOptions::KvType::F32 ? 4 : so.kv_type == SessionOptions::KvType::F16 ? 2 : 34.0 / 32;
    const double kv_mb = 2.0 * mc.n_layers * mc.n_kv_heads * mc.head_dim * per_value * (o->n_prompt + o->n_gen) / (1 << 20);
    const ModelInfo& mi = model->info();
    nlohmann::json j = {{"model", o->model.model},
                        {"threads", so.threads == 0 ? -1 : so.threads},
                        {"kernels", kernels::active().name},
                        {"backend", o->model.backend},
                        {"device", o->model.device},
                        {"n_prompt", o->n_prompt},
                        {"n_gen", o->n_gen},
                        {"repetitions", o->reps},
                        {"load_s", load_s},
                        {"ttft_ms", median(ttft) * 1e3},
                        {"prefill_tok_s", median(pp)},
                        {"decode_tok_s", median(tg)},
                        {"peak_rss_mb", peak_rss_mb()},
                        {"weight_mb", static_cast<double>(mi.weight_bytes) / 1e6},
                        {"load_anon_mb", after_load.anon_mb},
                        {"load_file_mb", after_load.file_mb},
                        {"run_anon_mb", after_run.anon_mb},
                        {"run_file_mb", after_run.file_mb},
                        {"kv_written_mb", kv_mb}};
    if (o->json) {
      std::cout << j.dump() << "\n";
      return;
    }
    std::printf("model         %s (%s, %.1f MB of weights)\n", o->model.model.c_str(), mi.name.c_str(), mi.weight_bytes / 1e6);
    if (so.backend == SessionOptions::Backend::Vulkan)
      std::printf("backend       vulkan, device %d (`minnow devices` names it)\n", so.device);
    else
      std::printf("kernels       %s\n", kernels::active().name);
    std::printf("load          %.3f s\n", load_s);
    std::printf("ttft (pp%d)   %.1f ms\n", o->n_prompt, median(ttft) * 1e3);
    std::printf("prefill       %.1f tok/s (%d tokens)\n", median(pp), o->n_prompt);
    std::printf("decode        %.1f tok/s (%d tokens)\n", median(tg), o->n_gen);
    std::printf("peak RSS      %.1f MB\n", peak_rss_mb());
    if (after_run.anon_mb >= 0)
      std::printf("resident      after load: %.1f MiB anonymous + %.1f MiB file; after the runs: %.1f + %.1f (KV cache written: %.1f MiB)\n",
                  after_load.anon_mb, after_load.file_mb, after_run.anon_mb, after_run.file_mb,
                  kv_mb);
    std::printf("(medians of %d repetitions)\n", o->reps);
  });
}

}  // namespace minnow::cli
