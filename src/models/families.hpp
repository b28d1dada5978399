// Per-family binders: each reads its hyper-parameters and binds its tensors.
#pragma once
#include "formats/gguf.hpp"
#include "models/model.hpp"

namespace minnow {

void bind_llama(const GgufFile& f, LoadedModel& m);

}  // namespace minnow
