// The storage type behind the public SessionOptions::KvType.
#pragma once
#include "minnow/llm.hpp"
#include "tensor/dtype.hpp"

namespace minnow {

inline DType kv_dtype(SessionOptions::KvType t) {
  switch (t) {
    case SessionOptions::KvType::F32: return DType::F32;
    case SessionOptions::KvType::Q8_0: return DType::Q8_0;
    default: return DType::F16;
  }
}

}  // namespace minnow
