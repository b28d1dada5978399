#include "quant/quantize_model.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <vector>

#include "base/error.hpp"
#include "formats/gguf_writer.hpp"
#include "quant/exact_convert.hpp"
#include "quant/gptq.hpp"
#include "quant/imatrix_match.hpp"
#include "quant/quantize.hpp"

namespace minnow::quant {
namespace {

// Rows per task: enough work to amortize a task (~64k values), few enough to balance.
int64_t rows_per_task(int64_t row_len, int64_t rows, int threads) {
  const int64_t by_size = std::max<int64_t>(1, (int64_t{1} << 16) / std::max<int64_t>(1, row_len));
  const int64_t by_balance = std::max<int64_t>(1, rows / (8 * std::max(1, threads)));
  return std::min(by_size, by_balance);
}

}  // namespace

QuantizeReport quantize_model(const ModelSource& src, const Plan& plan, const std::string& out, ThreadPool& pool,
                              const QuantizeCallbacks& cb, const Imatrix* imatrix, const GptqOptions* gptq) {
  const auto start = std::chrono::steady_clock::now();
  QuantizeReport report;
  GgufWriter w(out);
  src.write_metadata(w);
  w.set_u32("general.file_type", file_type_of(plan.target));
  w.set_u32("general.quantization_version", 2);  // ggml's current layout of the quantized types

  std::vector<DType> types;
  std::vector<bool> exact;  // written without loss from the stored blocks
  std::map<std::string, std::vector<const std::string*>> fallbacks;  // message -> tensors, for one line each
  std::map<std::string, std::vector<const std::string*>> exacts;     // "Q4_K as Q5_K" -> tensors
  for (const SourceTensor& t : src.tensors) {
    const Choice c = plan.choose({t.name, t.dims, src.n_layers, src.tied_output});
    if (!c.fallback.empty()) fallbacks[c.fallback].push_back(&t.name);
    types.push_back(c.type);
    exact.push_back(t.raw != nullptr && converts_exactly(t.type, c.type) && dtype_traits(c.type).block_size > 1);
    if (exact.back()) exacts[t.type_name + (t.type == c.type ? std::string(" kept") : std::string(" as ") + dtype_name(c.type))].push_back(&t.name);
    w.add_tensor(t.name, t.dims, c.type);
    report.in_bytes += t.n_bytes;
    report.n_elements += t.n_elements;
    report.type_counts[dtype_name(c.type)]++;
  }
  const auto count = [](const std::vector<const std::string*>& names) {
    return std::to_string(names.size()) + (names.size() == 1 ? " tensor (" : " tensors (") + *names[0] +
           (names.size() > 1 ? ", ...)" : ")");
  };
  if (cb.note) {
    for (const auto& [message, names] : fallbacks) cb.note(message + ": " + count(names));
    for (const auto& [how, names] : exacts)
      cb.note(how + ", every value unchanged" + (imatrix || gptq ? " (nothing to weigh)" : "") + ": " +
              count(names));
  }
  std::vector<std::vector<float>> importance(src.tensors.size());
  if (imatrix) {
    std::vector<std::string> missing;
    const auto quantized = [&](size_t i) { return dtype_traits(types[i]).block_size > 1 && !exact[i]; };
    importance = match_imatrix(*imatrix, src, quantized, missing);
    if (cb.note && !missing.empty())
      cb.note("warning: the imatrix has no entry for " + std::to_string(missing.size()) + " quantized tensor" +
              (missing.size() == 1 ? "" : "s") + " (" + missing[0] + (missing.size() > 1 ? ", ..." : "") +
              "): quantized without importance");
  }
  w.begin_data();

  // GPTQ factors, one per shared input, made when its first matrix comes and dropped after
  // its last (Q, K and V share one; so do gate and up).
  std::map<const SecondMoments*, int> uses;
  std::map<const SecondMoments*, std::vector<float>> factors;
  const auto moments_of = [&](const SourceTensor& t, DType type) -> const SecondMoments* {
    if (!gptq || dtype_traits(type).block_size == 1 || t.dims.size() != 2) return nullptr;
    auto it = gptq->moments.find(t.name);
    if (it == gptq->moments.end() || it->second->h.empty() || it->second->n != t.dims[0]) return nullptr;
    return it->second.get();
  };
  for (size_t ti = 0; ti < src.tensors.size(); ++ti)
    if (const SecondMoments* m = moments_of(src.tensors[ti], types[ti]); m && !exact[ti]) uses[m]++;
  const auto gptq_factor_for = [&](const SourceTensor& t, DType type, int64_t n) -> const float* {
    const SecondMoments* m = moments_of(t, type);
    if (!m) return nullptr;
    for (auto it = factors.begin(); it != factors.end();)  // those whose matrices are all done
      it = uses[it->first] == 0 ? factors.erase(it) : std::next(it);
    auto [it, fresh] = factors.try_emplace(m);
    if (fresh) {
      try {
        it->second = gptq_factor(m->h, n, gptq->damp, pool);
      } catch (const Error& e) {
        throw Error("quantize: tensor '" + t.name + "': " + e.what());
      }
    }
    uses[m]--;
    return it->second.data();
  };

  std::vector<uint8_t> buffer;
  std::vector<std::vector<float>> rows(static_cast<size_t>(pool.size()));
  Progress p;
  p.n_tensors = src.tensors.size();
  p.total_elements = report.n_elements;
  for (size_t ti = 0; ti < src.tensors.size(); ++ti) {
    const SourceTensor& t = src.tensors[ti];
    const DType type = types[ti];
    const float* imp = importance[ti].empty() ? nullptr : importance[ti].data();
    const int64_t row_len = t.dims[0], n_rows = t.rows();
    const float* u = exact[ti] ? nullptr : gptq_factor_for(t, type, row_len);
    const uint64_t row_bytes = *dtype_bytes(type, static_cast<uint64_t>(row_len));
    const uint64_t src_row_bytes = exact[ti] ? *dtype_bytes(t.type, static_cast<uint64_t>(row_len)) : 0;
    const int64_t src_blocks = row_len / dtype_traits(t.type).block_size;
    buffer.resize(w.tensor_bytes(ti));
    for (auto& r : rows) r.resize(static_cast<size_t>(row_len));
    const int64_t per_task = rows_per_task(row_len, n_rows, pool.size());
    const int64_t n_tasks = (n_rows + per_task - 1) / per_task;
    // Errors inside the pool are kept (the first, by row) and raised here, on this thread.
    std::mutex error_mutex;
    std::string error;
    int64_t error_row = INT64_MAX;
    pool.parallel_for(n_tasks, [&](int64_t task, int thread) {
      float* row = rows[static_cast<size_t>(thread)].data();
      const int64_t end = std::min(n_rows, (task + 1) * per_task);
      for (int64_t r = task * per_task; r < end; ++r) {
        try {
          uint8_t* dst = buffer.data() + static_cast<uint64_t>(r) * row_bytes;
          if (exact[ti] && convert_exactly(t.type, type, t.raw + static_cast<uint64_t>(r) * src_row_bytes, dst, src_blocks))
            continue;
          t.read_row(r, row);
          if (u) quantize_row_gptq(type, row, row_len, dst, imp, u);
          else quantize_row(type, row, row_len, dst, imp);
        } catch (const std::exception& e) {
          std::lock_guard<std::mutex> lock(error_mutex);
          if (r < error_row) {
            error_row = r, error = e.what();
            if (error.rfind("quantize: ", 0) == 0) error.erase(0, 10);
          }
          return;
        }
      }
    });
    if (!error.empty())
      throw Error("quantize: tensor '" + t.name + "' row " + std::to_string(error_row) + " (to " + dtype_name(type) +
                  "): " + error);
    w.write_tensor_data(buffer.data(), buffer.size());
    report.out_bytes += buffer.size();
    p.tensor_index = ti + 1;
    p.name = &t.name;
    p.type = type;
    p.done_elements += t.n_elements;
    if (cb.progress) cb.progress(p);
  }
  w.finish();
  std::error_code ec;
  report.out_file_bytes = std::filesystem::file_size(out, ec);
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

}  // namespace minnow::quant
