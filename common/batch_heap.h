// For processes that make and free tens of megabytes of per-tuple arrays
// every batch (the worker, the CLI's sweeps, benchmarks of both): glibc maps
// an allocation over its threshold (128 KiB at first) fresh and unmaps it on
// free, so each batch paid a page fault per 4 KiB it touched: a visible
// share of a sweep worker's time on ptxas's kept code (docs/performance.md,
// "Exhaustive sweeps").

#ifndef PTXDIFF_COMMON_BATCH_HEAP_H_
#define PTXDIFF_COMMON_BATCH_HEAP_H_

#include <malloc.h>

namespace ptxdiff {

// Keeps allocations up to 32 MiB (glibc's most) in the heap, and up to
// 256 MiB of freed heap for the next batch. Call once, early in main.
inline void KeepBatchMemoryInTheHeap() {
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
}

}  // namespace ptxdiff

#endif  // PTXDIFF_COMMON_BATCH_HEAP_H_
