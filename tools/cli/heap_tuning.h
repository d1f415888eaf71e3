// Heap settings for runs that evaluate large cases on many threads.
//
// A conformance case allocates and frees host tensors of up to tens of MB (the binary64 reference,
// the dot-product check, the judge's floors). glibc hands every block above its mmap threshold
// back to the kernel when it is freed, so the next case maps, page-faults and zeroes it again,
// and with several threads those page faults and unmaps queue on the process's one memory-map
// lock. Measured on `tapecheck run` with GPU-sized cases (2 cores): 40% of the CPU time was kernel
// time and a second thread gained almost nothing; with freed blocks kept in the heap the kernel
// time fell by 60% and the second thread paid off. The cost is that the process keeps its peak
// heap until it exits, which for a run is the right trade.
#pragma once

#if defined(__GLIBC__)
#include <malloc.h>

#include <climits>
#endif

namespace tapecheck::cli {

inline void keepFreedMemoryInTheHeap() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 32 << 20);  // the largest glibc accepts (half its 64 MiB heap size)
  mallopt(M_TRIM_THRESHOLD, INT_MAX);   // never give the heap's top back
#endif
}

}  // namespace tapecheck::cli
