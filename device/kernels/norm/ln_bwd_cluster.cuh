// layer_norm backward for rows held across a cluster of up to kLnClusterMaxBlocks blocks
// (8K-64K columns, and 4K-8K of 16-byte units: kLnShortClusterBlocks), with dgamma/dbeta fused
// into the row pass as ln_bwd_fused.cuh does for shorter rows: dy and xhat are read from HBM
// once. (The row kernel plus the separate column pass, which longer rows still take, move 20
// bytes an element for 12.)
//
// dx is computed as norm_bwd_cluster<false> computes it, on a tile of kLnClusterUnits units a
// thread spread over C blocks (plan_cluster), chosen from cols alone.
//
// dgamma[j] = sum_r dy*xhat, dbeta[j] = sum_r dy. A column is held by one thread of the
// cluster in every row the cluster takes, so that thread keeps the column's two double
// accumulators (in shared memory, added to in float batches of rows: ln_colsum_batch.cuh)
// and, at the end, writes them as the cluster's partial row. Cluster g takes rows g, g + G,
// g + 2G, ... in order, with G fixed from (rows, cols) alone (ln_cluster_count), and
// ln_colsum_finish adds the G partials of a column in a fixed tree: the bits depend only on
// the shape. No atomics.
//
// The 64K rows need clusters of 8 blocks, one a multiprocessor, of which an H200 holds 15: 120
// of its 132 multiprocessors. Moving a row's sums through global memory instead of the mailbox,
// to use every multiprocessor (a grid-wide split of each row, or groups of ordinary blocks), is
// slower: the mailbox's exchange is what a cluster has that global memory has not.
#pragma once

#include "norm/ln_bwd_fused.cuh"
#include "common/row_cluster.cuh"

namespace tapecheck_cuda {

// false: rows past the fused tile keep the row kernel and the separate column pass.
constexpr bool kUseLnCluster = true;
// Rows needing more blocks than this keep them too.
// Clusters of 8 at 64K: 0.653-0.655 of copy speed, the separate passes 0.542 (CHANGELOG 1.6.1).
constexpr unsigned kLnClusterMaxBlocks = kMaxCluster;
// The next row's L2 prefetch (row_cluster.cuh), one row ahead: not a stage (cluster_stage.cuh)
// as batch norm's backward has, which with the accumulators and gamma would take 224 KiB of
// shared memory a block and is slower, and not two or three rows ahead, which is slower still.
// 16K / 32K / 64K: 0.359 / 0.306 / 0.259 of copy speed without, 0.407 / 0.329 / 0.272 with
// (CHANGELOG 1.4.0, with one cluster more than fit, which halves both).
constexpr bool kLnClusterPrefetch = true;
// Units of 4 floats a thread (scalar rows: twice as many units of one float): 128 registers,
// blocks of up to 512 threads. A row's fixed work (reductions, exchange, address arithmetic) is
// spread over 16 floats a thread, and 16K columns take clusters of 2, which fill all 132
// multiprocessors of an H200 (of 4: 124). 2, 3, 6 or 8 units, with the same clusters, are
// slower at 16K-64K.
// 16K / 32K / 64K: 0.78-0.79 / 0.70-0.71 / 0.66 with 2 units, 0.85 / 0.77 / 0.67 with 4
// (CHANGELOG 1.9.6).
constexpr int kLnClusterUnits = 4;

// Floats a thread of the tile holds, and the most threads a block of it: 64 registers a thread
// up to 8 floats, 128 beyond (__launch_bounds__ below, and one or two blocks a
// multiprocessor in ln_cluster_count).
__host__ __device__ constexpr int ln_cluster_floats(int V) {
  return V == 4 ? 4 * kLnClusterUnits : 2 * kLnClusterUnits;
}
__host__ __device__ constexpr unsigned ln_cluster_max_threads(int floats) {
  return floats <= 8 ? 1024 : 512;
}

// One row a cluster a turn: two rows a turn (one exchange and one accumulator update for both)
// spill, and loading the next row into registers before the current row's exchange is slower.

// Rows of 16-byte units keep each thread's gamma in shared memory: a thread's columns are the
// same in every row, so it reads them once. Read from global memory in each row, the second
// read, after the exchange, would come from L2: the exchange's cluster-scope acquire
// invalidates L1 (CCTL.IVALL after the mailbox wait). Scalar rows (V = 1) keep the global
// loads: with the slice in shared memory their kernel, held to 64 registers a thread, spills.
// 64K columns: 0.662-0.669 -> 0.845-0.849 of copy speed (CHANGELOG 1.14.0).
template <int V>
constexpr bool kLnGammaShared = V == 4;

// A block's dynamic shared memory: the column sums' accumulators, then, where kLnGammaShared,
// its gamma ([N][threads] units of 4 floats, each read back only by the thread that wrote it).
template <int V>
__host__ __device__ constexpr size_t ln_cluster_smem(int N, size_t threads) {
  const size_t per_float = 2 * sizeof(double) + (kLnGammaShared<V> ? sizeof(float) : 0);
  return per_float * static_cast<size_t>(N * V) * threads;
}

template <int N, int V, bool kVec>
__global__ void __launch_bounds__(ln_cluster_max_threads(N * V), 1)
    ln_bwd_cluster(const float* __restrict__ dy, const float* __restrict__ xhat,
                   const float* __restrict__ inv_std, const float* __restrict__ gamma,
                   float* __restrict__ dx, double2* __restrict__ partial, size_t rows,
                   uint32_t cols) {
  __shared__ WarpPartials<2> wsum;
  __shared__ Mailbox<2> mail;  // one exchange a row
  extern __shared__ double acc[];  // [2][N][V][blockDim.x], then the block's gamma
  cg::cluster_group cl = cg::this_cluster();
  const unsigned C = cl.num_blocks();
  const unsigned RT = C * blockDim.x;
  const unsigned lane = cl.block_rank() * blockDim.x + threadIdx.x;
  const size_t clusters = gridDim.x / C;
  const double n = static_cast<double>(cols);
  ColumnSums<N, V, true> colsums;
  colsums.start(acc, kLnBatchRowsWide);
  // The thread's gamma (kLnGammaShared), unit i at gamma_units[i * blockDim.x + threadIdx.x].
  float4* const gamma_units = reinterpret_cast<float4*>(acc + 2 * N * V * blockDim.x);
  if constexpr (kLnGammaShared<V>) {
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const size_t j = static_cast<size_t>(i * RT + lane) * V;
      float gm[V] = {0.0f, 0.0f, 0.0f, 0.0f};
      if (j < cols) load_unit<V, kVec>(gamma, j, gm);
      gamma_units[i * blockDim.x + threadIdx.x] = make_float4(gm[0], gm[1], gm[2], gm[3]);
    }
  }
  // Unit i's gamma, at column j.
  auto gamma_of = [&](int i, size_t j, float (&gm)[V]) {
    if constexpr (kLnGammaShared<V>) {
      const float4 q = gamma_units[i * blockDim.x + threadIdx.x];
      gm[0] = q.x;
      gm[1] = q.y;
      gm[2] = q.z;
      gm[3] = q.w;
    } else {
      load_unit<V, kVec>(gamma, j, gm);
    }
  };
  unsigned turn = 0;  // the cluster's rows so far
  mailbox_open(mail);

  for (size_t row = blockIdx.x / C; row < rows; row += clusters, ++turn) {
    const size_t base = row * cols;
    const float istd = __ldg(inv_std + row);
    float d[N][V], h[N][V];
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const size_t j = static_cast<size_t>(i * RT + lane) * V;
      if (j < cols) {
        load_unit<V, kVec>(dy, base + j, d[i]);
        load_unit<V, kVec>(xhat, base + j, h[i]);
      }
    }
    prefetch_row_share<kVec && kLnClusterPrefetch>(dy, row + clusters, rows, cols);
    prefetch_row_share<kVec && kLnClusterPrefetch>(xhat, row + clusters, rows, cols);
    double sums[2] = {0.0, 0.0};  // sum g, sum g * xhat
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const size_t j = static_cast<size_t>(i * RT + lane) * V;
      if (j < cols) {
        float gm[V];
        gamma_of(i, j, gm);
        add_ln_bwd_sums<V>(gm, d[i], h[i], sums);
        colsums.add(i, d[i], h[i]);
      }
    }
    colsums.row_done(kLnBatchRowsWide);
    cluster_sums<2>(sums, wsum, mail, turn);
    const float mean_g = static_cast<float>(sums[0] / n);
    const float mean_gx = static_cast<float>(sums[1] / n);
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const size_t j = static_cast<size_t>(i * RT + lane) * V;
      if (j < cols) {
        float gm[V], o[V];
        gamma_of(i, j, gm);
        ln_bwd_dx<V>(gm, d[i], h[i], istd, mean_g, mean_gx, o);
        store_unit<V, kVec>(dx, base + j, o);
      }
    }
  }

  colsums.flush();
  // The cluster's partial row: each column has one holder, so no adding across threads.
  double2* out = partial + (blockIdx.x / C) * static_cast<size_t>(cols);
#pragma unroll
  for (int i = 0; i < N; ++i) {
#pragma unroll
    for (int k = 0; k < V; ++k) {
      const size_t j = static_cast<size_t>(i * RT + lane) * V + k;
      if (j < cols) out[j] = make_double2(colsums.at(0, i, k), colsums.at(1, i, k));
    }
  }
  cluster_barrier();  // no block leaves while another's sends may still be in flight
}

// ---------------------------------------------------------------------------------------------
// Host side.
//
// G, the number of clusters, from (rows, cols) only, as ln_bwd_fused's grid: one wave. Every
// cluster must be resident from the start, as each takes a fixed share of the rows: one
// cluster more than fit waits for a whole share to finish elsewhere, doubling the time. Which
// clusters fit depends on how the device groups its multiprocessors (a cluster's blocks share
// a GPC), so G comes from a table, never from a device query, and the bits stay a function of
// the shape: the clusters of C blocks an H200 holds at once (cudaOccupancyMaxActiveClusters
// there), for blocks that fit one or two to a multiprocessor. Other GPUs get the same G and
// bits, only another speed.
constexpr size_t kH200Clusters[2][kMaxCluster - 1] = {
    {66, 39, 30, 22, 17, 15, 15},    // 1 block a multiprocessor, C = 2..8
    {132, 79, 62, 47, 39, 32, 30}};  // 2 blocks

inline size_t ln_cluster_count(const ClusterTile& ct, size_t rows) {
  // Up to half the most threads, two blocks fit a multiprocessor: registers for 1024 threads
  // at 64 a thread or 512 at 128, and at most 64 KiB of accumulators a block.
  const size_t per_sm = 2 * ct.T <= ln_cluster_max_threads(ln_cluster_floats(ct.V)) ? 2 : 1;
  size_t g = kH200Clusters[per_sm - 1][ct.C - 2];
  if (g > rows) g = rows;
  return g < 1 ? 1 : g;
}

template <int N, int V, bool kVec>
bool launch_ln_bwd_cluster(const ClusterTile& ct, size_t G, cudaStream_t s, const float* dy,
                           const float* xhat, const float* inv_std, const float* gamma, float* dx,
                           double2* partial, size_t rows, uint32_t cols) {
  auto k = ln_bwd_cluster<N, V, kVec>;
  // Raised to what the instantiation can need at most (its most threads), the same value from
  // every caller (ln_bwd_fused.cuh says why).
  // Refused (a device with less shared memory a block): the caller runs the separate passes.
  constexpr size_t kMostSmem = ln_cluster_smem<V>(N, ln_cluster_max_threads(N * V));
  if (!allow_dynamic_shared(k, static_cast<int>(kMostSmem))) return false;
  const size_t smem = ln_cluster_smem<V>(N, ct.T);
  return launch_clusters(k, ct, G, smem, s, dy, xhat, inv_std, gamma, dx, partial, rows, cols);
}

// Rows of 16-byte units of 4097-8192 columns: ln_bwd_fused's block rows would hold them at 8
// floats a thread, 1024 threads a block, one block a multiprocessor, with nothing to overlap its
// barriers. They take this kernel's tile of 16 floats a thread instead, on clusters of
// kLnShortClusterBlocks blocks (0: the block rows), two blocks a multiprocessor.
// 8K columns: block rows 0.844-0.849 of copy speed, clusters of 2 x 256 0.956-0.960
// (CHANGELOG 1.17.0).
constexpr unsigned kLnShortClusterBlocks = 2;
static_assert(kLnShortClusterBlocks == 0 || kLnShortClusterBlocks >= 2, "kH200Clusters has C >= 2");
constexpr uint32_t kLnShortClusterMinCols = 4097;
constexpr uint32_t kLnShortClusterMaxCols = 8192;

inline bool ln_short_cluster_takes(uint32_t cols) {
  return kLnShortClusterBlocks > 0 && cols % 4 == 0 && cols >= kLnShortClusterMinCols &&
         cols <= kLnShortClusterMaxCols;
}

// The tile of ln_bwd_cluster for cols, from cols alone; false when it takes no cluster.
// Blocks of 512 threads past 8K columns, one a multiprocessor at 128 registers. A
// multiprocessor's shared memory holds the column accumulators (16 bytes a column) of about 14K
// columns, so a row of 32K needs at least three multiprocessors' worth of blocks a cluster, and
// no such cluster shape fills more than 0.909 of an H200's block slots; narrower blocks (8 x 256
// or 16 x 128 at 32K) are slower, and 64K would need clusters of 16, of which an H200 holds
// fewer block slots' worth than of 8 (cudaOccupancyMaxActiveClusters).
inline bool plan_ln_cluster(uint32_t cols, ClusterTile& ct) {
  if (ln_short_cluster_takes(cols)) {
    ct.V = 4;
    ct.C = kLnShortClusterBlocks;
    ct.T = static_cast<unsigned>(
        ceil_div(ceil_div(cols / 4, static_cast<size_t>(ct.C) * kLnClusterUnits), 32) * 32);
    return true;
  }
  return plan_cluster(cols, kLnClusterUnits, ct);
}

// Returns false (nothing launched) for rows it does not take, when the scratch for the
// partials cannot be had, or when the device refuses the launch: the caller then runs the
// separate passes.
inline bool ln_bwd_clustered(cudaStream_t s, Scratch& scratch, size_t rows, uint32_t cols,
                             const float* dy, const float* xhat, const float* inv_std,
                             const float* gamma, float* dx, float* dgamma, float* dbeta) {
  ClusterTile ct;
  if (!kUseLnCluster || rows == 0 || !plan_ln_cluster(cols, ct) ||
      ct.C > kLnClusterMaxBlocks || ct.T > ln_cluster_max_threads(ln_cluster_floats(ct.V))) {
    return false;
  }
  const size_t G = ln_cluster_count(ct, rows);
  double2* partial = scratch.get<double2>(G * cols);
  if (partial == nullptr) return false;
  const bool vec = aligned16(dy) && aligned16(xhat) && aligned16(dx) && aligned16(gamma);
  const bool launched =
      launch_cluster_form<kLnClusterUnits>(ct, vec, [&](auto n, auto v, auto kvec) {
        return launch_ln_bwd_cluster<n, v, kvec>(ct, G, s, dy, xhat, inv_std, gamma, dx, partial,
                                                 rows, cols);
      });
  if (!launched) return false;
  launch_ln_colsum_finish(s, partial, G, cols, dgamma, dbeta);
  return true;
}

}  // namespace tapecheck_cuda
