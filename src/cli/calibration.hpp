// The calibration pass shared by `minnow imatrix` and `minnow quantize --gptq`: a model run
// over a text, with an observer watching every matmul's input.
#pragma once
#include <string>

#include "base/thread_pool.hpp"
#include "models/matmul_observer.hpp"
#include "models/model.hpp"

namespace minnow::cli {

struct CalibrationRun {
  int chunks = 0, chunk_size = 0;
};

// Cuts the text at `path` into chunks as `minnow perplexity` does (ctx tokens each, capped
// by the trained context; the first replaced by BOS), runs at most max_chunks of them (0:
// all) with every row's logits (so the head sees every token), and prints one progress line
// per chunk prefixed by `label`. Throws Error on an unreadable file or a text shorter than
// one chunk.
CalibrationRun run_calibration(const LoadedModel& lm, const std::string& path, int ctx, int max_chunks, ThreadPool& pool,
                               MatmulObserver& observer, const char* label);

}  // namespace minnow::cli
