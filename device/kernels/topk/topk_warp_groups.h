// The warp groups of topk_warp_groups.cu: two warps a row of 4097-8192 columns, four warps a row
// of 8193-16384.
#pragma once

#include "common/common.cuh"

namespace tapecheck_cuda {

// Launches the warp groups when they take the rows (x 16-byte aligned, cols % 4 == 0, and
// 4097 <= cols <= 8192 with 5 <= k <= 64, or 8193 <= cols <= 16384 with 2 <= k <= 64) and
// returns true; returns false, launching nothing, otherwise. `status`: launch_status().
bool topk_warp_group_plan(cudaStream_t s, size_t rows, uint32_t cols, uint32_t k, const float* x,
                          float* mask, int& status);

}  // namespace tapecheck_cuda
