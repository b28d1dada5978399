#include "models/pack_weights.hpp"

#include <algorithm>
#include <memory>
#include <vector>

#include "base/huge_pages.hpp"
#include "kernels/packed.hpp"

namespace minnow {

void pack_weights(LoadedModel& m, const std::function<void(const uint8_t*, size_t)>& drop) {
  std::vector<kernels::WeightView*> views;
  for (auto& l : m.layers)
    for (kernels::WeightView* w : {&l.wq, &l.wk, &l.wv, &l.wo, &l.gate, &l.up, &l.down}) views.push_back(w);
  views.push_back(&m.output);

  size_t total = 0;
  for (auto* w : views)
    if (w->data && !w->packed && kernels::packable(w->type)) total += kernels::packed_bytes(w->type, w->rows, w->cols);
  if (total == 0) return;
  m.packed = std::make_unique_for_overwrite<uint8_t[]>(total);
  // Decode streams all of it once per token: with 4 KiB pages that is a TLB miss every 4 KiB
  // of each stream (Qwen2.5-Coder-1.5B, -t 2, alternating runs: prefill +10%, decode level).
  advise_huge_pages(m.packed.get(), total);
  uint8_t* dst = m.packed.get();
  // A slice of rows at a time, each dropped once copied: the file's pages and the copy
  // are both resident for one slice only, so loading peaks at the weights' size.
  constexpr int64_t kSliceRows = 64 * kernels::kPackRows;
  for (auto* w : views) {
    if (!w->data || w->packed || !kernels::packable(w->type)) continue;  // packed in the file
    w->packed = dst;
    for (int64_t r0 = 0; r0 < w->rows; r0 += kSliceRows) {
      kernels::WeightView slice = *w;
      slice.data += r0 * w->row_bytes;
      slice.rows = std::min(kSliceRows, w->rows - r0);
      kernels::pack_rows(slice, dst);
      dst += kernels::packed_bytes(w->type, slice.rows, w->cols);
      drop(slice.data, static_cast<size_t>(slice.rows) * w->row_bytes);
    }
  }
  // A tied embedding looks its rows up in the packed copy too, so the file's pages (and the
  // kernel's fault-around neighbours of each row) stay out of memory.
  if (m.token_embd.data == m.output.data) m.token_embd.packed = m.output.packed;
}

}  // namespace minnow
