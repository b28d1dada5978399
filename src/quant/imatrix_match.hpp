// Pairs an importance matrix with a model source: one importance vector per tensor.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "quant/imatrix.hpp"
#include "quant/model_source.hpp"
#include "tensor/dtype.hpp"

namespace minnow::quant {

// Importance per tensor of src, in src's order (empty: none). Throws Error (one line) when
// an entry names no tensor of src or its column count is not the tensor's row length.
// `wants(i)`: whether tensor i is quantized to a type that uses importance; those without
// an entry are listed in `missing`.
std::vector<std::vector<float>> match_imatrix(const Imatrix& m, const ModelSource& src,
                                              const std::function<bool(size_t)>& wants,
                                              std::vector<std::string>& missing);

}  // namespace minnow::quant
