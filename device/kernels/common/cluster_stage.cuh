// The next row of a cluster kernel (row_cluster.cuh), copied into shared memory by the tensor
// memory accelerator while the block works on the current row in registers.
//
// Why: a cluster's threads have a row's loads in flight only until its first exchange; through
// the reductions, the exchange and the stores that follow, a block asks nothing of HBM. The L2
// prefetch (prefetch_row_share) has the next row's bytes on their way, but each thread still
// waits on L2 for its loads when the next row starts. A bulk copy of the block's share of the
// next row (cp.async.bulk) needs no registers while it is in flight, and when the row starts
// its units are one shared-memory read away. This is what the whole warps of topk_mask do
// (topk_warp_stage.cuh), applied to a cluster's blocks.
//
// The block's share keeps row_cluster.cuh's layout: thread t of the block of rank r holds units
// i * C * T + r * T + t (i < N), so its share is N runs of T units, each run one bulk copy, and
// every value, and every order of summation, is what the loads from global memory gave.
//
// One stage a block: thread t reads its N units into registers (take), then the block passes a
// barrier and thread 0 starts the copy of the next row into the same stage (refill). Only on the
// 16-byte path (cols % 4 == 0 and aligned pointers), as the copies need 16-byte alignment and
// sizes. The stage replaces the L2 prefetch there.
//
// Who stages (each file's constant has its figure): the norms' cluster kernels, forward and
// backward (norm_cluster.cuh), and cross-entropy's forward (ce_cluster.cuh). The softmax family,
// cross-entropy's backward and layer_norm_bwd's cluster kernel gain nothing from it or lose
// (CHANGELOG 1.16.0), and keep the L2 prefetch.
#pragma once

#include <cooperative_groups.h>
#include <cuda/ptx>

#include "common/row_cluster.cuh"

namespace tapecheck_cuda {

// S inputs a row (the norms' forward: x; their backward: dy and xhat; cross-entropy's forward:
// logits and target), N units of 4 floats a thread each.
template <int S, int N>
struct ClusterRowStage {
  float4* units;    // [S][N][blockDim.x], dynamic shared memory
  uint64_t* full;   // completes when the row's S shares have arrived
  unsigned turn = 0;  // rows taken so far: the parity of the barrier's current phase

  __host__ __device__ static constexpr size_t bytes(unsigned threads) {
    return static_cast<size_t>(S) * N * threads * sizeof(float4);
  }

  // Thread 0, before mailbox_open (whose cluster barrier then orders it before any copy): a
  // barrier that one arrival, with the copies' bytes, completes, visible to the async proxy.
  __device__ void init() const {
    cuda::ptx::mbarrier_init(full, 1);
    cuda::ptx::fence_mbarrier_init(cuda::ptx::sem_release, cuda::ptx::scope_cluster);
    cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);
  }

  // Thread 0: starts the copies of the block's share of row `row` of each src.
  __device__ void fill(const float* const (&src)[S], size_t row, uint32_t cols) const {
    cg::cluster_group cl = cg::this_cluster();
    const uint32_t T = blockDim.x, RT = cl.num_blocks() * T, first = cl.block_rank() * T;
    const uint32_t row_units = cols / 4;
    uint32_t run[N];  // units of run i (0 past the row's end)
    uint32_t total = 0;
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const uint32_t u0 = static_cast<uint32_t>(i) * RT + first;
      run[i] = u0 >= row_units ? 0u : ::min(T, row_units - u0);
      total += run[i];
    }
    // Orders the block's earlier reads of the stage (made visible by the barrier before this
    // call) before the copies' writes.
    cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);
    cuda::ptx::mbarrier_arrive_expect_tx(cuda::ptx::sem_release, cuda::ptx::scope_cta,
                                         cuda::ptx::space_shared, full,
                                         static_cast<uint32_t>(S * total * sizeof(float4)));
#pragma unroll
    for (int q = 0; q < S; ++q) {
      const float* const r = src[q] + row * cols;
#pragma unroll
      for (int i = 0; i < N; ++i) {
        if (run[i] == 0) continue;
        const uint32_t u0 = static_cast<uint32_t>(i) * RT + first;
        cuda::ptx::cp_async_bulk(cuda::ptx::space_cluster, cuda::ptx::space_global,
                                 units + (q * N + i) * T, r + static_cast<size_t>(u0) * 4,
                                 run[i] * static_cast<uint32_t>(sizeof(float4)), full);
      }
    }
  }

  // Every thread: waits for this turn's row.
  __device__ void wait() {
    while (!cuda::ptx::mbarrier_try_wait_parity(full, turn & 1u)) {
    }
    ++turn;
  }

  // Every thread, after wait: reads its units of input q, those in the row (unit i's first float
  // j < cols), as load_unit would from global memory. lane: the thread's index in the row's RT.
  __device__ void take(int q, float (&v)[N][4], uint32_t lane, uint32_t RT, uint32_t cols) const {
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const size_t j = static_cast<size_t>(i * RT + lane) * 4;
      if (j < cols) {
        const float4 u = units[(q * N + i) * blockDim.x + threadIdx.x];
        v[i][0] = u.x;
        v[i][1] = u.y;
        v[i][2] = u.z;
        v[i][3] = u.w;
      }
    }
  }

  // Every thread, after its takes of this turn: once every warp has read the stage, thread 0
  // starts the copy of row `next` (none when next >= rows).
  // Every warp waits at the barrier (a __syncthreads), not warp 0 alone behind a named barrier
  // the others only arrive at: with that, compute-sanitizer's racecheck reports hazards in
  // cross-entropy's staged forward between accesses that a __syncthreads separates; with every
  // warp waiting it reports none, at no cost the bench can tell apart (CHANGELOG 1.20.1).
  __device__ void refill(const float* const (&src)[S], size_t next, size_t rows,
                         uint32_t cols) const {
    __syncthreads();
    if (threadIdx.x == 0 && next < rows) fill(src, next, cols);
  }
};

// Launches a cluster kernel that stages its rows (kStaged), with bytes(threads) of dynamic
// shared memory at `threads` threads a block, or one that does not, as launch_cluster does.
// False when the device refuses. The limit on dynamic shared memory is a property of the kernel
// shared by every host thread, so it is raised to what the kernel can need at most (1024
// threads), the same value from every caller (launch_ln_bwd_fused, ln_bwd_fused.cuh, says why).
template <bool kStaged, class Bytes, class... KArgs, class... Args>
bool launch_cluster_with_stage(void (*kernel)(KArgs...), const ClusterTile& ct, size_t rows,
                               Bytes bytes, cudaStream_t s, Args... args) {
  if constexpr (!kStaged) {
    return launch_cluster(kernel, ct, rows, s, args...);
  } else {
    if (!allow_dynamic_shared(kernel, static_cast<int>(bytes(1024)))) return false;
    return launch_clusters(kernel, ct, cluster_count(rows, ct), bytes(ct.T), s, args...);
  }
}

}  // namespace tapecheck_cuda
