// minnow inspect: what a model file holds — architecture, hyper-parameters, tokenizer,
// every tensor — and, for one tensor, statistics of its dequantized values.
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>

#include "base/error.hpp"
#include "cli/common.hpp"
#include "models/model.hpp"

namespace minnow::cli {
namespace {

std::string shape_text(const TensorRef& t) {
  std::string s = "[";
  for (size_t i = 0; i < t.dims.size(); ++i) s += (i ? ", " : "") + std::to_string(t.dims[i]);
  return s + "]";
}

std::string bytes_text(uint64_t n) {
  char buf[32];
  if (n >= (1u << 20)) std::snprintf(buf, sizeof buf, "%.2f MiB", static_cast<double>(n) / (1 << 20));
  else if (n >= 1024) std::snprintf(buf, sizeof buf, "%.1f KiB", static_cast<double>(n) / 1024);
  else std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(n));
  return buf;
}

void print_summary(const std::string& path, const LoadedModel& m) {
  const ModelConfig& c = m.config;
  std::printf("model        %s (%s)\n", path.c_str(), m.format.c_str());
  std::printf("weights      %s\n", m.pack_layout.empty() ? "not pre-packed (quantized matrices are repacked at load, into anonymous memory)"
                                                           : ("pre-packed, layout " + m.pack_layout + " (mapped from the file, no copy)").c_str());
  std::printf("architecture %s%s%s\n", c.arch.c_str(), c.name.empty() ? "" : "  name: ", c.name.c_str());
  std::printf("shape        %d layers, d_model %d, d_ff %d, %d heads (%d KV) x %d, vocab %d, context %d\n", c.n_layers,
              c.d_model, c.d_ff, c.n_heads, c.n_kv_heads, c.head_dim, c.vocab_size, c.ctx_train);
  const char* scaling[] = {"none", "linear", "llama3"};
  std::printf("rope         %s, base %g, scaling %s x%g%s\n",
              c.rope_style == RopeStyle::AdjacentPairs ? "adjacent pairs" : "half split", c.rope_base,
              scaling[static_cast<int>(c.rope_scaling.type)], c.rope_scaling.factor,
              m.rope_freq_factors.empty() ? "" : ", per-frequency factors (rope_freqs)");
  int sliding = 0;
  for (int l = 0; l < c.n_layers; ++l) sliding += c.is_sliding(l);
  if (sliding) std::printf("attention    sliding window %d on %d of %d layers (RoPE base %g there)\n", c.sliding_window, sliding, c.n_layers, c.rope_base_local);
  std::printf("block        %s%s%s%s, RMSNorm eps %g%s\n", c.activation == Activation::SiLU ? "SwiGLU" : "GeGLU",
              c.qkv_bias ? ", QKV bias" : "", c.qk_norm ? ", QK norm" : "", c.sandwich_norm ? ", sandwich norms" : "",
              c.rms_eps, c.tied_output ? ", tied output head" : "");
  if (c.embed_scale != 1 || c.attn_scale > 0 || c.attn_softcap > 0 || c.final_softcap > 0)
    std::printf("scaling      embeddings x%g, attention scale %g, soft-cap attention %g / final %g\n", c.embed_scale,
                c.attn_scale > 0 ? c.attn_scale : 1 / std::sqrt(static_cast<float>(c.head_dim)), c.attn_softcap,
                c.final_softcap);
  const Tokenizer& tok = *m.tokenizer;
  auto token = [&](int32_t id) { return id < 0 ? std::string("none") : std::to_string(id) + " " + std::string(tok.token_text(id)); };
  std::printf("tokenizer    %d tokens, BOS %s%s, EOS %s; chat template: %s\n", tok.vocab_size(), token(tok.bos_id()).c_str(),
              tok.add_bos() ? " (added)" : "", token(tok.eos_id()).c_str(),
              m.chat_template.empty() ? "none" : (std::to_string(m.chat_template.size()) + " chars").c_str());
  uint64_t total = 0, params = 0;
  for (const auto& t : m.tensors) total += t.n_bytes, params += t.n_elements;
  std::printf("tensors      %zu, %.1f M parameters, %s\n", m.tensors.size(), static_cast<double>(params) / 1e6, bytes_text(total).c_str());
  for (const auto& t : m.tensors)
    std::printf("  %-48s %-6s %-20s %s\n", t.name.c_str(), t.type_name.c_str(), shape_text(t).c_str(), bytes_text(t.n_bytes).c_str());
}

void print_tensor(const LoadedModel& m, const std::string& name, bool stats) {
  const TensorRef* t = nullptr;
  for (const auto& x : m.tensors)
    if (x.name == name) t = &x;
  if (!t) throw Error("inspect: no tensor named '" + name + "' (run without --tensor to list them)");
  std::printf("%s  %s  %s  %s\n", t->name.c_str(), t->type_name.c_str(), shape_text(*t).c_str(), bytes_text(t->n_bytes).c_str());
  if (!stats) return;
  if (t->dims.empty() || t->n_elements == 0) throw Error("inspect: tensor '" + name + "' is empty");
  const int64_t cols = t->dims[0], rows = static_cast<int64_t>(t->n_elements / static_cast<uint64_t>(cols));
  const kernels::WeightView w = TensorTable::matrix(*t, cols, rows);
  std::vector<float> row(static_cast<size_t>(cols));
  double sum = 0, sum2 = 0;
  float lo = std::numeric_limits<float>::infinity(), hi = -lo;
  std::vector<float> first;
  for (int64_t r = 0; r < rows; ++r) {
    kernels::dequantize_row(w, r, row.data());
    for (float v : row) {
      sum += v, sum2 += static_cast<double>(v) * v;
      lo = std::min(lo, v), hi = std::max(hi, v);
      if (first.size() < 8) first.push_back(v);
    }
  }
  const double n = static_cast<double>(t->n_elements), mean = sum / n;
  std::printf("min %.6g  max %.6g  mean %.6g  std %.6g\nfirst values:", lo, hi, mean, std::sqrt(std::max(0.0, sum2 / n - mean * mean)));
  for (float v : first) std::printf(" %.6g", v);
  std::printf("\n");
}

}  // namespace

void register_inspect(CLI::App& app) {
  struct Opts {
    std::string model, tensor;
    bool stats = false;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("inspect", "Show what a model holds: hyper-parameters, tokenizer, tensors");
  cmd->footer(
      "Examples:\n"
      "  minnow inspect -m models/SmolLM2-135M-Instruct.Q4_1.gguf\n"
      "  minnow inspect -m path/to/hf-checkpoint-dir --tensor model.norm.weight --stats");
  cmd->add_option("-m,--model", o->model, "Model: a GGUF file or a Hugging Face checkpoint directory")->required();
  cmd->add_option("--tensor", o->tensor, "Show only this tensor");
  cmd->add_flag("--stats", o->stats, "With --tensor: min/max/mean/std and the first values, dequantized");
  cmd->callback([o] {
    if (o->stats && o->tensor.empty()) throw CLI::ValidationError("inspect", "--stats needs --tensor NAME");
    auto model = load_model_or_throw(o->model);
    if (o->tensor.empty()) print_summary(o->model, model->impl());
    else print_tensor(model->impl(), o->tensor, o->stats);
  });
}

}  // namespace minnow::cli
