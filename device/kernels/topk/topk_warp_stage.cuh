// A whole warp's next row, copied into shared memory by the tensor memory accelerator (one bulk
// copy, cp.async.bulk) while the warp searches its current row in registers.
//
// Why: the whole warps of 32-128 keys a lane (rows of 513-4096 columns, topk_mask.cu) need up
// to 160 registers, so a scheduler holds few of them: a warp's loads of a row and its search
// follow each other, and too few warps overlap them. The copy of the next row needs no
// registers while it is in flight (topk_mask.cu, kStageWideWarpRows, has the figures).
//
// Rows must be 16-byte aligned and a multiple of 16 bytes long (x aligned, cols % 4 == 0).
#pragma once

#include <cuda/ptx>

#include "common/common.cuh"
#include "topk/topk_key.cuh"

namespace tapecheck_cuda {

// One warp's stage (or one warp group's): `row` holds a row of floats, `full` is the mbarrier
// that the copy completes. The team's first thread issues the copies; every thread waits and reads.
struct WarpRowStage {
  float* row;
  uint64_t* full;
  unsigned turn = 0;  // rows taken so far: the parity of the barrier's current phase

  // The first thread, before any copy: a barrier that one arrival (with the copy's bytes)
  // completes, made visible to the copy engine (the async proxy).
  __device__ void init() const {
    cuda::ptx::mbarrier_init(full, 1);
    cuda::ptx::fence_mbarrier_init(cuda::ptx::sem_release, cuda::ptx::scope_cluster);
    cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);
  }

  // The first thread: starts the copy of `cols` floats from src. The team has read the previous
  // row out of the stage (__syncwarp, or the group's barrier, before this call); the proxy fence
  // orders those reads before the copy's writes.
  __device__ void fill(const float* src, uint32_t cols) const {
    const uint32_t bytes = cols * 4u;
    cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);
    cuda::ptx::mbarrier_arrive_expect_tx(cuda::ptx::sem_release, cuda::ptx::scope_cta,
                                         cuda::ptx::space_shared, full, bytes);
    cuda::ptx::cp_async_bulk(cuda::ptx::space_cluster, cuda::ptx::space_global, row, src, bytes,
                             full);
  }

  // Every thread: waits for the row of this turn to have arrived.
  __device__ void wait() {
    while (!cuda::ptx::mbarrier_try_wait_parity(full, turn & 1u)) {
    }
    ++turn;
  }

  // Every thread of the team that shares the stage (kStride threads: a warp, or a warp group):
  // waits for the row of this turn, then takes its keys as load_keys would from global memory
  // (entry member + kStride i, 0 past cols; the row holds up to kStride * VPT floats).
  template <unsigned kStride = 32, int VPT>
  __device__ void take(uint32_t (&key)[VPT], unsigned member, uint32_t cols) {
    wait();
#pragma unroll
    for (int i = 0; i < VPT; ++i) {
      const uint32_t j = member + static_cast<uint32_t>(i) * kStride;
      key[i] = j < cols ? rank_key(row[j]) : 0u;
    }
  }
};

}  // namespace tapecheck_cuda
