// Transparent huge pages for large, long-lived buffers that are streamed through (the
// packed weights): one TLB entry per 2 MiB instead of per 4 KiB. Linux only; elsewhere,
// and where the kernel refuses, nothing happens.
#pragma once
#include <cstddef>

namespace minnow {

// Asks for huge pages over the 2 MiB-aligned part of [p, p + n); call before the pages are
// first written, so the faults allocate huge pages directly.
void advise_huge_pages(void* p, size_t n);

}  // namespace minnow
