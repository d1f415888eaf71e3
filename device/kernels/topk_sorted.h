// The launch plans of topk_sorted.cuh (topk_sorted.cu), for rows held in registers and small k.
#pragma once

#include "common.cuh"

namespace tapecheck_cuda {

// Launches the sorting-network plan for the row length and k when there is one (2 <= k <=
// kSortedMaxK, cols <= kSortedMaxCols, and the plan measured faster there than the bit search)
// and returns true; returns false, launching nothing, otherwise. `status`: launch_status().
bool topk_sorted_plan(cudaStream_t s, size_t rows, uint32_t cols, uint32_t k, const float* x,
                      float* mask, int& status);

// Launches the cluster plan of topk_sorted_cluster.cu (rows longer than the block plan holds,
// 2 <= k <= kClusterMaxK) when it applies; as topk_sorted_plan otherwise.
bool topk_sorted_cluster_plan(cudaStream_t s, size_t rows, uint32_t cols, uint32_t k,
                              const float* x, float* mask, int& status);

}  // namespace tapecheck_cuda
