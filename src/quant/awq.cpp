#include "quant/awq.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>

#include "quant/exact_convert.hpp"
#include "quant/quantize.hpp"

namespace minnow::quant {
namespace {

// alpha in 0, 1/8, 1/4. Searched up to 1 the measure chose up to 1/2, and on a grid of
// 1/16 other values, and both scored worse (docs/quantize.md): the measure rewards scaling
// more than the model's outputs do.
constexpr int kAlphaSteps = 2;
constexpr float kMaxAlpha = 0.25f;
constexpr int64_t kSearchRows = 256;    // rows of each matrix the search quantizes

struct Group {
  size_t fold = 0;          // the norm (its weights divided by s), or ffn_up (its rows divided by s)
  bool fold_rows = false;
  std::vector<size_t> mats;
  std::vector<float> a;  // mean squared activation per column
};

// s_j = a_j^(alpha/2), divided by their geometric mean; a_j below a millionth of the
// largest counts as that (a column never seen active must not get a zero scale).
std::vector<float> column_scales(const std::vector<float>& a, float alpha) {
  const float top = *std::max_element(a.begin(), a.end());
  std::vector<float> s(a.size(), 1.0f);
  if (!(top > 0) || alpha == 0) return s;
  std::vector<double> logs(a.size());
  double mean = 0;
  for (size_t j = 0; j < a.size(); ++j) mean += logs[j] = 0.5 * alpha * std::log(std::max(a[j], top * 1e-6f));
  mean /= static_cast<double>(a.size());
  for (size_t j = 0; j < a.size(); ++j) s[j] = static_cast<float>(std::exp(logs[j] - mean));
  return s;
}

// sum over sampled rows and columns of a_j (w_j - q_j / s_j)^2, which is
// (a_j / s_j^2) (s_j w_j - q_j)^2: the importance-weighted error of the scaled row.
double weighted_error(const SourceTensor& t, DType type, const std::vector<float>& a, const std::vector<float>& s,
                      ThreadPool& pool) {
  const int64_t n = t.dims[0], rows = t.rows();
  const int64_t stride = std::max<int64_t>(1, rows / kSearchRows);
  const int64_t samples = (rows + stride - 1) / stride;
  std::vector<float> imp(a.size());
  for (size_t j = 0; j < a.size(); ++j) imp[j] = a[j] / (s[j] * s[j]);
  const DTypeTraits& tr = dtype_traits(type);
  const uint64_t row_bytes = *dtype_bytes(type, static_cast<uint64_t>(n));
  struct Scratch {
    std::vector<float> row, back;
    std::vector<uint8_t> q;
    double sum = 0;
  };
  std::vector<Scratch> scratch(static_cast<size_t>(pool.size()));
  for (Scratch& sc : scratch) sc.row.resize(static_cast<size_t>(n)), sc.back.resize(static_cast<size_t>(n)), sc.q.resize(row_bytes);
  pool.parallel_for(samples, [&](int64_t i, int thread) {
    Scratch& sc = scratch[static_cast<size_t>(thread)];
    t.read_row(i * stride, sc.row.data());
    for (int64_t j = 0; j < n; ++j) sc.row[j] *= s[j];
    quantize_row(type, sc.row.data(), n, sc.q.data(), imp.data());
    tr.dequantize(sc.q.data(), sc.back.data(), n / tr.block_size);
    double sum = 0;
    for (int64_t j = 0; j < n; ++j) {
      const double d = static_cast<double>(sc.row[j]) - sc.back[j];
      sum += imp[j] * d * d;
    }
    sc.sum += sum;
  });
  double total = 0;
  for (const Scratch& sc : scratch) total += sc.sum;
  return total;
}

}  // namespace

AwqReport apply_awq(ModelSource& src, Imatrix& imatrix, const std::function<DType(size_t)>& type_of,
                    ThreadPool& pool) {
  std::map<std::string, size_t> by_name;
  for (size_t i = 0; i < src.tensors.size(); ++i) by_name[src.tensors[i].name] = i;
  const auto find = [&](const std::string& name) -> const size_t* {
    auto it = by_name.find(name);
    return it == by_name.end() ? nullptr : &it->second;
  };

  AwqReport report;
  std::vector<Group> groups;
  // Adds the group of `mats` (those present) folding into `fold`, or a reason it is skipped.
  const auto add_group = [&](const std::string& name, size_t fold, bool fold_rows, std::vector<std::string> mats) {
    const SourceTensor& f = src.tensors[fold];
    const int64_t n = fold_rows ? f.rows() : f.dims[0];
    Group g{fold, fold_rows, {}, {}};
    std::string why;
    if (!fold_rows && (f.dims.size() != 1 || type_of(fold) != DType::F32)) why = "the norm is not a vector kept as F32";
    if (fold_rows && f.dims.size() != 2) why = f.name + " is not a matrix";
    for (const std::string& m : mats) {
      const size_t* i = find(m);
      if (!i || !why.empty()) continue;
      const SourceTensor& t = src.tensors[*i];
      const DType type = type_of(*i);
      std::vector<float> a = imatrix.importance(t.name);
      if (t.dims.size() != 2 || t.dims[0] != n) why = t.name + " does not read " + f.name + "'s output";
      else if (dtype_traits(type).block_size == 1) why = t.name + " is not quantized";
      else if (!dtype_bytes(type, static_cast<uint64_t>(n))) why = t.name + "'s rows are no whole number of " + dtype_name(type) + " blocks";
      else if (t.raw && converts_exactly(t.type, type)) why = t.name + " is copied exactly (" + t.type_name + " as " + dtype_name(type) + ")";
      else if (a.empty()) why = "the imatrix has no entry for " + t.name;
      else if (a.size() != static_cast<size_t>(n)) why = "the imatrix entry for " + t.name + " has another length";  // quantize refuses it
      else if (!std::all_of(a.begin(), a.end(), [](float v) { return std::isfinite(v) && v >= 0; }))
        why = "the imatrix entry for " + t.name + " holds negative or non-finite values";
      else if (g.a.empty()) g.a = std::move(a);
      g.mats.push_back(*i);
    }
    if (why.empty() && g.mats.empty()) why = "no matrix reads it";
    if (!why.empty()) report.skipped.push_back(name + ": " + why);
    else groups.push_back(std::move(g)), report.groups.push_back({name, 0, 0, 0});
  };
  for (int layer = 0; layer < src.n_layers; ++layer) {
    const std::string blk = "blk." + std::to_string(layer) + ".";
    const size_t *attn_norm = find(blk + "attn_norm.weight"), *ffn_norm = find(blk + "ffn_norm.weight");
    if (!attn_norm || !ffn_norm) continue;
    add_group(blk + "attn_norm.weight", *attn_norm, false,
              {blk + "attn_q.weight", blk + "attn_k.weight", blk + "attn_v.weight", blk + "attn_qkv.weight"});
    add_group(blk + "ffn_norm.weight", *ffn_norm, false, {blk + "ffn_gate.weight", blk + "ffn_up.weight"});
    // down reads act(gate) * up, linear in up's rows.
    if (const size_t* up = find(blk + "ffn_up.weight"); up && find(blk + "ffn_gate.weight"))
      add_group(blk + "ffn_down.weight", *up, true, {blk + "ffn_down.weight"});
  }

  for (size_t gi = 0; gi < groups.size(); ++gi) {
    const Group& g = groups[gi];
    AwqGroup& r = report.groups[gi];
    std::vector<float> best_s;
    for (int step = 0; step <= kAlphaSteps; ++step) {
      const float alpha = kMaxAlpha * static_cast<float>(step) / kAlphaSteps;
      std::vector<float> s = column_scales(g.a, alpha);
      double err = 0;
      for (size_t i : g.mats) err += weighted_error(src.tensors[i], type_of(i), g.a, s, pool);
      if (step == 0) r.unscaled_error = r.error = err;
      else if (err < r.error) r.error = err, r.alpha = alpha, best_s = std::move(s);
    }
    if (r.alpha == 0) continue;
    auto s = std::make_shared<const std::vector<float>>(std::move(best_s));
    for (size_t i : g.mats) {
      SourceTensor& t = src.tensors[i];
      t.read_row = [read = t.read_row, s](int64_t row, float* out) {
        read(row, out);
        for (size_t j = 0; j < s->size(); ++j) out[j] *= (*s)[j];
      };
      t.raw = nullptr;
      ImatrixEntry& e = imatrix.entries.at(t.name);
      for (size_t j = 0; j < s->size(); ++j) e.sum2[j] /= (*s)[j] * (*s)[j];
    }
    SourceTensor& f = src.tensors[g.fold];
    if (g.fold_rows)
      f.read_row = [read = f.read_row, s, n = f.dims[0]](int64_t row, float* out) {
        read(row, out);
        for (int64_t j = 0; j < n; ++j) out[j] /= (*s)[static_cast<size_t>(row)];
      };
    else
      f.read_row = [read = f.read_row, s](int64_t row, float* out) {
        read(row, out);
        for (size_t j = 0; j < s->size(); ++j) out[j] /= (*s)[j];
      };
    f.raw = nullptr;
  }
  return report;
}

}  // namespace minnow::quant
