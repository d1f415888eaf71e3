// The histogram-based topKMask kernels (topk_histogram.cu).
#pragma once

#include "common/common.cuh"

namespace tapecheck_cuda {

// One block per row, each of the four byte passes and the write re-reading the row.
int topk_histogram_rows(cudaStream_t s, size_t rows, uint32_t cols, uint32_t k, const float* x,
                        float* mask);

// Few very long rows: each row cut into chunks handled by separate blocks.
constexpr size_t kSplitMaxRows = 256;
constexpr uint32_t kSplitMinCols = 65536;
int topk_split(cudaStream_t s, size_t rows, uint32_t cols, uint32_t k, const float* x, float* mask);

}  // namespace tapecheck_cuda
