// The warp pairs of topk_warp_pair.cu: two warps a row of 4097-8192 columns.
#pragma once

#include "common.cuh"

namespace tapecheck_cuda {

// Launches the warp pairs when they take the rows (kPairRowMinCols <= cols <= kPairRowMaxCols,
// kPairRowMinK <= k <= kPairRowMaxK, x 16-byte aligned, cols % 4 == 0) and returns true;
// returns false, launching nothing, otherwise. `status`: launch_status().
bool topk_warp_pair_plan(cudaStream_t s, size_t rows, uint32_t cols, uint32_t k, const float* x,
                         float* mask, int& status);

}  // namespace tapecheck_cuda
