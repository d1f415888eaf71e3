// The library's own stream-ordered memory pool for scratch (Scratch, common.cuh).
//
// The device's default pool has a release threshold of 0: every synchronization of a stream
// hands its free memory back to the driver, so a caller that synchronizes between calls (a tape
// checking each result, the benchmark timing each call) would have the driver map fresh memory
// on every call that needs scratch (layer norm's backward, cross-entropy's loss, the split
// top-k). This pool keeps up to kScratchKeepBytes between calls. It is created per device on
// first use and lives as long as the process; where stream-ordered pools are unsupported it is
// null and Scratch takes cudaMallocAsync's default pool.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace tapecheck_cuda {

// Enough for layer_norm_bwd's fused partials at 8K columns (132 blocks x 8K x 16 bytes, 17 MB)
// and the cross-entropy and split top-k scratch; larger needs still work, and their excess is
// released at the next synchronization.
// Cross-entropy's forward at 32-8K columns: 0.86-0.93 of copy speed -> 0.94-0.99 (CHANGELOG 1.3.1).
constexpr size_t kScratchKeepBytes = size_t{64} << 20;

// The current device's pool, or nullptr. Thread-safe.
cudaMemPool_t scratch_pool();

}  // namespace tapecheck_cuda
