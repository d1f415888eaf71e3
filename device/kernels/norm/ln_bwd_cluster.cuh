// layer_norm backward for rows held across a cluster of up to kLnClusterMaxBlocks blocks
// (8K-64K columns, and since kernels 1.17.0 4K-8K of 16-byte units: kLnShortClusterBlocks),
// with dgamma/dbeta fused into the row pass as ln_bwd_fused.cuh does for
// shorter rows: dy and xhat are read from HBM once. (The row kernel plus the separate column
// pass, which longer rows still take, move 20 bytes an element for 12: measured on an H200,
// 0.51-0.57 of copy speed at 16K-64K columns, with the column pass alone at 90% of DRAM
// bandwidth.)
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
// Not kept (against 1.27.0, five calls; tools/bench/results/
// 2026-12-03-h200-1.27.0-grid-candidates/, GR): each row split into 132 fixed column parts, one
// block a multiprocessor (a cooperative launch), so a block holds the same ~500 columns in
// every row and their column sums fit in registers, at the price of a grid-wide exchange of
// each row's two sums through global memory. The best version (2 units of 4 floats a lane,
// rows staged in shared memory 6 steps deep) read 0.862-0.866 of copy speed at 64K columns
// against 0.852-0.860 for these clusters, +0.009 in the mean, and lost 0.03 at 32K and 0.31 at
// 16K. ncu of a version one step shallower had its warps waiting most on the row totals.
// Nor (against 1.27.0, one call; tools/bench/results/2026-12-04-h200-1.27.0-group-candidates/,
// VG) this kernel's own tile on groups of ordinary blocks (a cooperative launch, each row's
// sums stored to and polled from global memory), which fill 128 multiprocessors at 64K and all
// 132 at 32K: 0.66-0.69 / 0.75-0.77 / 0.77-0.80 of copy speed at 64K / 32K / 16K against
// 0.84-0.85 / 0.89-0.90 / 0.94-0.95 for these clusters: as much lost at 16K, where both fill
// 132. The mailbox's exchange is what these clusters have that global memory has not.
#pragma once

#include "norm/ln_bwd_fused.cuh"
#include "common/row_cluster.cuh"

namespace tapecheck_cuda {

// false: rows past the fused tile keep the row kernel and the separate column pass.
constexpr bool kUseLnCluster = true;
// Rows needing more blocks than this keep them too. With a cluster barrier a row (up to
// kernels 1.5.1), clusters of 8 lost to the separate passes on an H200 (ours/copy, one run: 32K
// columns, 8 x 512 threads, 0.510 against 0.545; 64K, 8 x 1024, 0.491 against 0.507), so the
// limit was 4. With the mailbox exchange (row_cluster.cuh) they win (one run, 2 repeats): 32K
// 0.698-0.701 against 0.560-0.563, 64K 0.653-0.655 against 0.542.
constexpr unsigned kLnClusterMaxBlocks = kMaxCluster;
// The next row's L2 prefetch (row_cluster.cuh). Measured on an H200 at 16K / 32K / 64K
// columns (with one cluster more than fit, which doubled both times): 0.359 / 0.306 / 0.259 of
// copy speed without, 0.407 / 0.329 / 0.272 with (tools/bench/results/
// 2026-11-30-h200-1.4.0-candidates/). The prefetch, not a stage (cluster_stage.cuh) as batch
// norm's backward has: with its next row's dy and xhat copied into shared memory (224 KiB a
// block with the accumulators and gamma) this kernel measured slower on an H200 (ours/copy,
// two runs each against 1.15.0 in one session: 16K / 32K / 64K 0.937-0.942 / 0.893-0.897 /
// 0.838-0.853 -> 0.929-0.931 / 0.889-0.891 / 0.831-0.842;
// tools/bench/results/2026-12-02-h200-1.16.0-candidates/).
// One row ahead, no further: measured on an H200 against 1.22.0 in the same calls (ours/copy,
// 8K / 16K / 32K / 64K columns), one row ahead read 0.956-0.972 / 0.927-0.947 / 0.887-0.904 /
// 0.840-0.852, two rows ahead 0.781-0.785 / 0.776-0.787 / 0.789-0.790 / 0.765-0.771, three
// 0.656-0.679, and no prefetch 0.898-0.908 / 0.833-0.839 / 0.762-0.766 / 0.714-0.717
// (tools/bench/results/2026-12-03-h200-candidates-after-1.22.0/, which also has the loads
// evict-first, slower).
constexpr bool kLnClusterPrefetch = true;
// Units of 4 floats a thread (scalar rows: twice as many units of one float). 2 up to 1.9.5,
// as the fused tile: 8 floats a thread, 64 registers, blocks of up to 1024 threads. With 4 (128
// registers, blocks of up to 512 threads, the same accumulators' shared memory a
// multiprocessor) a row's fixed work (reductions, exchange, address arithmetic) is spread over
// twice the floats, and 16K columns take clusters of 2, which fill all 132 multiprocessors of
// an H200 (of 4: 124).
// Measured on an H200, two runs each, ours/copy, both with batches of 8 rows: 16K / 32K / 64K
// 0.78-0.79 / 0.70-0.71 / 0.66 -> 0.85 / 0.77 / 0.67; ncu at 16K against 1.9.5: 407M -> 252M
// warp instructions (tools/bench/results/2026-12-01-h200-1.9.6-candidates/).
// Nor fewer or more units with the same clusters (threads scaled to hold the row), against 1.26.0
// (ours/copy, three rounds each in one call; tools/bench/results/
// 2026-12-03-h200-1.27.0-candidates/, LU and UW). At 16K / 32K / 64K columns, 4 units read
// 0.933-0.940 / 0.893-0.895 / 0.838-0.856; 2 units (blocks of 1024, 64 registers, 20 bytes
// spilled) 0.877-0.878 / 0.793-0.797 / 0.723-0.735; 3 units (704, 80 registers) 0.874-0.879 /
// 0.796-0.803 / 0.738-0.742; 2 units on clusters of 8 (two blocks a multiprocessor at 16K and
// 32K) 0.863-0.871 / 0.784-0.791 / 0.723-0.735. In another call, against 0.933-0.937 /
// 0.894-0.897 / 0.840-0.846: 8 units (256, 255 registers) 0.901-0.908 / 0.850-0.855 /
// 0.801-0.808, and 6 (352, 168 registers, 4 bytes spilled) 0.650-0.664 / 0.582-0.593 /
// 0.508-0.512.
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

// One row a cluster a turn. Two (one exchange and one accumulator update for both, as
// ln_bwd_fused's R at 8K) spilled 48 bytes a thread at 64 registers and measured slower on an
// H200 (ours/copy, 16K / 32K / 64K: 0.77 / 0.71 / 0.66 -> 0.72 / 0.65 / 0.55), as did loading
// the next row into registers before the current row's exchange (0.68 / 0.61 / 0.55)
// (tools/bench/results/2026-12-01-h200-kernels-1.9.2-layer-norm-bwd/).

// Rows of 16-byte units keep each thread's gamma in shared memory: a thread's columns are the
// same in every row, so it reads them once. Read from global memory in each row (up to 1.13.0),
// the second read, after the exchange, came from L2: the exchange's cluster-scope acquire
// invalidates L1 (CCTL.IVALL after the mailbox wait), and ncu of 1.12.0 at 64K columns had 21%
// of the stall samples on the FFMAs waiting for those loads. Measured on an H200 against 1.13.0
// (ours/copy, two runs each): 16K / 32K / 64K 0.835-0.842 / 0.759-0.764 / 0.662-0.669 ->
// 0.937-0.942 / 0.895-0.896 / 0.845-0.849
// (tools/bench/results/2026-12-02-h200-1.14.0-same-session/). Scalar rows (V = 1) keep the
// global loads: with the slice in shared memory their kernel, held to 64 registers a thread,
// spilled 48 bytes.
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
    // Not kept, against 1.26.0 (three rounds in one call; tools/bench/results/
    // 2026-12-03-h200-1.27.0-candidates/, OV and GX): the column sums' adds between the
    // exchange's sends and its wait (OV) read 0.882-0.890 / 0.810-0.825 of copy speed at 32K /
    // 64K columns against 0.901-0.909 / 0.843-0.859, and within 0.006 at 8K-16K; dy * gamma kept
    // in place of dy for dx, so that gamma is not read after the exchange (GX), lost 0.01-0.03
    // at 8K-64K (64K: 0.822-0.828).
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
// cluster more than fit waits for a whole share to finish elsewhere, doubling the time
// (measured on an H200: 0.41 / 0.33 / 0.27 of copy speed at 16K / 32K / 64K columns with 64 /
// 32 / 16 clusters, where 62 / 30 / 15 fit). Which clusters fit depends on how the device
// groups its multiprocessors (a cluster's blocks share a GPC), so G comes from a table, never
// from a device query, and the bits stay a function of the shape: the clusters of C blocks an
// H200 holds at once (cudaOccupancyMaxActiveClusters, measured there), for blocks that fit
// one or two to a multiprocessor. Other GPUs get the same G and bits, only another speed.
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
// floats a thread, 1024 threads a block, one block a multiprocessor. Since kernels 1.17.0 they
// take this kernel's tile of 16 floats a thread instead, on clusters of kLnShortClusterBlocks
// blocks (0: the block rows), two blocks a multiprocessor. Measured on an H200 (ours/copy,
// three runs each in one session, tools/bench/results/2026-12-02-h200-1.17.0-candidates/): at
// 8K columns the block rows ran 0.844-0.849, clusters of 2 x 256 threads 0.956-0.960, and
// single blocks of 512 threads (with one wave of 132 of them) 0.948-0.950.
constexpr unsigned kLnShortClusterBlocks = 2;
static_assert(kLnShortClusterBlocks == 0 || kLnShortClusterBlocks >= 2, "kH200Clusters has C >= 2");
constexpr uint32_t kLnShortClusterMinCols = 4097;
constexpr uint32_t kLnShortClusterMaxCols = 8192;

inline bool ln_short_cluster_takes(uint32_t cols) {
  return kLnShortClusterBlocks > 0 && cols % 4 == 0 && cols >= kLnShortClusterMinCols &&
         cols <= kLnShortClusterMaxCols;
}

// The tile of ln_bwd_cluster for cols, from cols alone; false when it takes no cluster.
// Blocks of 512 threads past 8K columns, one a multiprocessor at 128 registers. Measured on an
// H200 against 1.22.1 in one session (ours/copy, three rounds), 32K columns on clusters of 8 x 256
// threads (two blocks of different clusters a multiprocessor, 30 clusters) read 0.882-0.884
// against 0.892-0.897 for 4 x 512 (tools/bench/results/2026-12-03-h200-candidates-after-1.22.1/,
// LB256). 64K columns cannot share multiprocessors that way: 16 blocks of 256 threads would need
// clusters of 16, of which an H200 holds 14 at two blocks a multiprocessor, 224 of 264 block
// slots against 240 for clusters of 8 (cudaOccupancyMaxActiveClusters, occ.txt in
// tools/bench/results/2026-12-03-h200-1.21.0-candidates/1-N1-N1B-D2-ncu-occupancy/).
// At 32K columns clusters of 16 x 128 threads (four blocks a multiprocessor, one wave of the 28
// an H200 holds) read 0.829-0.840 against 0.889-0.911 for 4 x 512 (three rounds, against 1.24.0
// in one call; tools/bench/results/2026-12-03-h200-1.25.0-candidates/, C16). A multiprocessor's
// shared memory holds the column accumulators (16 bytes a column) of about 14K columns, so a
// row of 32K needs at least three multiprocessors' worth of blocks a cluster, and no such
// cluster shape fills more than 0.909 of an H200's block slots (occ16.txt there).
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
