// The launch plans of topk_sorted.cuh (topk_sorted.cu), for rows held in registers and small k.
#pragma once

#include "common/common.cuh"

namespace tapecheck_cuda {

// Launches the sorting-network plan for the row length and k when there is one (2 <= k <=
// kSortedMaxK, cols <= kSortedMaxCols, and the plan is faster there than the bit search)
// and returns true; returns false, launching nothing, otherwise. `status`: launch_status().
bool topk_sorted_plan(cudaStream_t s, size_t rows, uint32_t cols, uint32_t k, const float* x,
                      float* mask, int& status);

}  // namespace tapecheck_cuda
