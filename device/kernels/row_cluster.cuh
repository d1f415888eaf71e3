// Rows too long for one block's registers, held across a thread-block cluster (sm_90): C
// blocks of T threads each hold their share of the row in registers, so the row is read from
// HBM once (the stream kernels read it twice or three times, the re-reads from L2 at best).
//
// The row's threads are numbered g = rank * T + t (rank = the block's rank in its cluster);
// thread g holds units g, g + C*T, g + 2*C*T, ... (as row_tiles.cuh with C*T threads a row).
// A reduction runs per thread, then a butterfly over the warp, then the warps of the block in
// index order (as row_sum<true>), then the C block partials in rank order, read by every
// block through distributed shared memory: all blocks get the identical result. (C, T) come
// from cols alone, so a row's result still depends only on its data and cols.
//
// One cluster barrier per reduction, and the kernels reduce once a row: the sums a row needs
// go together (cluster_sums), and the softmax family's maximum and sum go together
// (max_sum.cuh). Slots alternate by row parity: a block rewrites a slot only after the cluster
// barrier of the next row, which no block passes before it has read that slot. A final
// barrier keeps every block's shared memory alive until the others have read it.
#pragma once

#include <cooperative_groups.h>

#include "row_tiles.cuh"

namespace tapecheck_cuda {

namespace cg = cooperative_groups;

// Block partial in warp order; thread 0 publishes it in `slot`; the cluster's partials are
// combined in rank order. `warps` holds one entry per warp.
__device__ __forceinline__ double cluster_sum(double v, double* warps, double* slot) {
  for (unsigned off = 16; off != 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
  if ((threadIdx.x & 31u) == 0) warps[threadIdx.x >> 5] = v;
  __syncthreads();
  if (threadIdx.x == 0) {
    double b = warps[0];
    for (unsigned w = 1; w < (blockDim.x >> 5); ++w) b += warps[w];
    *slot = b;
  }
  cg::cluster_group cl = cg::this_cluster();
  cl.sync();
  double r = *cl.map_shared_rank(slot, 0);
  for (unsigned k = 1; k < cl.num_blocks(); ++k) r += *cl.map_shared_rank(slot, k);
  return r;
}

// K independent sums with one cluster barrier: each is added in exactly cluster_sum's order,
// so the results are bit for bit those of K calls. A kernel calling this once per row passes
// `slots` of alternating parity (two sets of K): a block writes a set only after the barrier
// of the next row, which no block passes before it has read that set.
template <int K>
__device__ __forceinline__ void cluster_sums(double (&v)[K], double (*warps)[32], double* slots) {
  for (unsigned off = 16; off != 0; off >>= 1) {
#pragma unroll
    for (int q = 0; q < K; ++q) v[q] += __shfl_xor_sync(0xffffffffu, v[q], off);
  }
  if ((threadIdx.x & 31u) == 0) {
#pragma unroll
    for (int q = 0; q < K; ++q) warps[q][threadIdx.x >> 5] = v[q];
  }
  __syncthreads();
  if (threadIdx.x < K) {
    const unsigned q = threadIdx.x;
    double b = warps[q][0];
    for (unsigned w = 1; w < (blockDim.x >> 5); ++w) b += warps[q][w];
    slots[q] = b;
  }
  cg::cluster_group cl = cg::this_cluster();
  cl.sync();
#pragma unroll
  for (int q = 0; q < K; ++q) {
    double r = *cl.map_shared_rank(&slots[q], 0);
    for (unsigned k = 1; k < cl.num_blocks(); ++k) r += *cl.map_shared_rank(&slots[q], k);
    v[q] = r;
  }
}

// The next row's bytes asked of L2 while this row is reduced. A cluster has a row's loads in
// flight only between the start of the row and its first barrier; through the reductions,
// barriers and stores that follow, HBM would idle (ncu on an H200: long-scoreboard stalls
// dominate these kernels, at about half of DRAM bandwidth). So right after issuing a row's
// loads, thread 0 of each block issues one bulk prefetch (sm_90 `cp.async.bulk.prefetch.L2`:
// no registers, no completion to wait on, no effect on any value) of its block's share of the
// row its cluster takes next, and that row's loads then hit L2. The shares are 1/C of the row
// each, in rank order, whoever loads them later. Only on the 16-byte path (kVec: cols % 4 == 0
// and aligned pointers), as the bulk prefetch needs 16-byte alignment and size.
//
// Measured on an H200 (ours/copy at 16K / 32K / 64K columns, one run): the forward kernels
// gain, most at 64K (layer norm 0.645 -> 0.712, batch norm 0.670 -> 0.729, softmax 0.780 ->
// 0.801, cross-entropy 0.768 -> 0.785); the backward kernels, with two inputs a row, mostly
// lose (softmax 0.984 / 0.972 / 0.947 -> 0.933 / 0.964 / 0.926, cross-entropy 0.916 / 0.911 /
// 0.881 -> 0.826 / 0.864 / 0.866), so they do not prefetch
// (tools/bench/results/2026-11-30-h200-1.4.0-candidates/).
constexpr bool kPrefetchForward = true;
constexpr bool kPrefetchBackward = false;

// kOn: the 16-byte path of a kernel that prefetches.
template <bool kOn>
__device__ __forceinline__ void prefetch_row_share(const float* p, size_t row, size_t rows,
                                                   uint32_t cols) {
  if constexpr (kOn) {
    if (threadIdx.x != 0 || row >= rows) return;
    cg::cluster_group cl = cg::this_cluster();
    const uint32_t units = cols / 4, C = cl.num_blocks();
    const uint32_t per = (units + C - 1) / C;
    const uint32_t u0 = cl.block_rank() * per;
    if (u0 >= units) return;
    const uint32_t u1 = u0 + per < units ? u0 + per : units;
    prefetch_l2(p + row * cols + static_cast<size_t>(u0) * 4, (u1 - u0) * 16u);
  }
}

// ---------------------------------------------------------------------------------------------
// Host side. At most 8 blocks a cluster (the portable limit). Blocks of at most 512 threads
// where 8 of them hold the row, so that a multiprocessor (64 registers a thread at 1024
// threads) runs two blocks of different rows and one's loads overlap the other's reductions
// and barriers; a block-row of more than 512 threads (one block a multiprocessor, nothing to
// overlap) is therefore handed to a cluster too. Longer rows: up to 1024 threads a block; past
// 8 x 1024 x nmax units, the stream kernels.
constexpr unsigned kMaxCluster = 8;
constexpr size_t kClusterThreads = 512;
// false: rows that fit one block of up to 1024 threads stay on the register tiles of one
// block; only longer ones take a cluster.
constexpr bool kClusterTakesBigBlocks = true;
// false: no cluster at all (every op on its register tiles and stream kernels).
constexpr bool kUseClusters = true;

struct ClusterTile {
  int V;       // floats per unit
  unsigned C;  // blocks per row (cluster size)
  unsigned T;  // threads per block, a multiple of 32
};

// From cols alone. False: the register tiles (up to 512 threads a row) or the stream kernels
// take the row.
inline bool plan_cluster(uint32_t cols, int nmax4, ClusterTile& ct) {
  if (!kUseClusters) return false;
  ct.V = cols % 4 == 0 ? 4 : 1;
  const size_t nmax = ct.V == 4 ? nmax4 : 2 * nmax4;
  const size_t units = ceil_div(cols, static_cast<size_t>(ct.V));
  const size_t half = kClusterThreads * nmax, full = 1024 * nmax;
  if (units <= half || (!kClusterTakesBigBlocks && units <= full)) return false;
  size_t per_block = half;
  if (units > kMaxCluster * half) per_block = full;
  if (units > kMaxCluster * full) return false;
  ct.C = static_cast<unsigned>(ceil_div(units, per_block));
  ct.T = static_cast<unsigned>(ceil_div(ceil_div(units, ct.C * nmax), 32) * 32);
  return true;
}

// One cluster per row at a time, clusters striding over the rows; the number of clusters
// does not affect a row's result (a row is computed by one cluster alone). From rows only, so
// a sum over all rows (the cross-entropy loss) is repeatable too.
inline size_t cluster_count(size_t rows) { return rows < 1024 ? (rows == 0 ? 1 : rows) : 1024; }

// `clusters` clusters of ct's shape, with `smem` bytes of dynamic shared memory a block.
template <class... KArgs, class... Args>
bool launch_clusters(void (*kernel)(KArgs...), const ClusterTile& ct, size_t clusters, size_t smem,
                     cudaStream_t s, Args... args) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(static_cast<unsigned>(clusters * ct.C));
  cfg.blockDim = dim3(ct.T);
  cfg.dynamicSmemBytes = smem;
  cfg.stream = s;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = ct.C;
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  if (cudaLaunchKernelEx(&cfg, kernel, static_cast<KArgs>(args)...) != cudaSuccess) {
    cudaGetLastError();  // a refused configuration is not sticky: clear it, the caller falls back
    return false;
  }
  return true;
}

template <class... KArgs, class... Args>
bool launch_cluster(void (*kernel)(KArgs...), const ClusterTile& ct, size_t rows, cudaStream_t s,
                    Args... args) {
  return launch_clusters(kernel, ct, cluster_count(rows), 0, s, args...);
}

}  // namespace tapecheck_cuda
