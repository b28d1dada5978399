// NumPy .npy files (format versions 1-3, little-endian, C order) to and from tensors: the
// inputs and outputs of `minnow onnx run`.
#pragma once
#include <string>

#include "minnow/onnx.hpp"

namespace minnow::onnx {

Tensor read_npy(const std::string& path);
void write_npy(const std::string& path, const Tensor& t);

}  // namespace minnow::onnx
