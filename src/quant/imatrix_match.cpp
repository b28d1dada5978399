#include "quant/imatrix_match.hpp"

#include <map>

#include "base/error.hpp"

namespace minnow::quant {

std::vector<std::vector<float>> match_imatrix(const Imatrix& m, const ModelSource& src,
                                              const std::function<bool(size_t)>& wants,
                                              std::vector<std::string>& missing) {
  std::map<std::string_view, size_t> by_name;
  for (size_t i = 0; i < src.tensors.size(); ++i) by_name[src.tensors[i].name] = i;
  std::vector<std::vector<float>> out(src.tensors.size());
  for (const auto& [name, e] : m.entries) {
    auto it = by_name.find(name);
    if (it == by_name.end()) throw Error("quantize: imatrix entry '" + name + "' names no tensor of the model (another model's imatrix?)");
    const SourceTensor& t = src.tensors[it->second];
    const size_t cols = e.counts.empty() ? 0 : e.sum2.size() / e.counts.size();
    if (e.counts.size() != 1 || static_cast<int64_t>(cols) != t.dims[0])
      throw Error("quantize: imatrix entry '" + name + "' has " + std::to_string(e.counts.size()) + " x " +
                  std::to_string(cols) + " values, the tensor's rows have " + std::to_string(t.dims[0]));
    out[it->second] = m.importance(name);
  }
  for (size_t i = 0; i < src.tensors.size(); ++i)
    if (out[i].empty() && wants(i)) missing.push_back(src.tensors[i].name);
  return out;
}

}  // namespace minnow::quant
