// A stand-in for the mimalloc header that Lean ships, for the same reason as lean.h here:
// torchlean_cuda_tensor.cu includes it for its allocator-collection hook, which the plugin never
// calls.
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "lean.h"

typedef struct mi_heap_s mi_heap_t;

inline void mi_collect(bool) { lean_standin_unreachable("mi_collect"); }
inline mi_heap_t* mi_heap_get_default(void) { lean_standin_unreachable("mi_heap_get_default"); }
inline void mi_heap_collect(mi_heap_t*, bool) { lean_standin_unreachable("mi_heap_collect"); }
inline void mi_collect_reduce(size_t) { lean_standin_unreachable("mi_collect_reduce"); }
