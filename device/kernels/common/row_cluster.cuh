// Rows too long for one block's registers, held across a thread-block cluster (sm_90): C
// blocks of T threads each hold their share of the row in registers, so the row is read from
// HBM once (the stream kernels read it twice or three times, the re-reads from L2 at best).
//
// The row's threads are numbered g = rank * T + t (rank = the block's rank in its cluster);
// thread g holds units g, g + C*T, g + 2*C*T, ... (as row_tiles.cuh with C*T threads a row).
// A reduction runs per thread, then a butterfly over the warp, then the warps of the block in
// index order (as row_sum<true>), then the C block partials in rank order: every block pushes
// its partial into every block's mailbox (below), so all blocks get the identical result. (C, T)
// come from cols alone, so a row's result still depends only on its data and cols.
//
// One exchange a row, and the kernels reduce once a row: the sums a row needs go together
// (cluster_sums), and the softmax family's maximum and sum go together (max_sum.cuh). A final
// cluster barrier keeps every block's shared memory alive until the others are done with it.
#pragma once

#include <cooperative_groups.h>
#include <cuda/ptx>

#include "common/row_tiles.cuh"

namespace tapecheck_cuda {

namespace cg = cooperative_groups;

// At most 8 blocks a cluster (the portable limit).
constexpr unsigned kMaxCluster = 8;

// ---------------------------------------------------------------------------------------------
// Exchanging the block partials of a row. Each block has a mailbox: a slot per block of the
// cluster, in rank order, in two sets by row parity, each set with an mbarrier whose phase
// completes when all C partials of its row have arrived. A block's partial is pushed into every
// block's mailbox with st.async, whose bytes count down the receiver's mbarrier; each block then
// waits on its own mbarrier only.
//
// Why not a cluster barrier after plain shared-memory writes (as up to kernels 1.5.1): the
// barrier's arrive has release semantics, so it waits until each thread's earlier memory
// operations, the previous row's stores among them, are performed at cluster scope. Measured on
// an H200 (ours/copy, one run, 2 repeats): a relaxed arrive, which would not order the slots'
// writes and so is not correct here, was faster by up to 0.06 (batch norm backward at 32K
// columns 0.875 -> 0.937, forward at 64K 0.730 -> 0.789; softmax forward at 32K 0.806 -> 0.839),
// and a release fence in the publishing warp alone gained nothing. st.async needs no release:
// the bytes themselves complete the receiver's phase.
//
// Two sets suffice: a block writes set p of another block's mailbox for row n + 2 only after it
// has received that block's partial for row n + 1, which that block sends after a
// __syncthreads that follows its reads of set p for row n.
template <int W>
struct Mailbox {
  uint64_t full[2];                  // by row parity
  double slot[2][kMaxCluster][W];    // [row parity][sender's rank][word]
};

// The cluster barriers a cluster kernel passes outside its rows: one after its mbarriers are
// initialized (mailbox_open) and one before its blocks exit. Their arrive is relaxed: neither
// needs the arrive's release, which makes each thread wait until its earlier memory operations
// (at the exit, the last row's stores) are performed at cluster scope (MEMBAR.ALL.GPU and
// ERRBAR in the SASS of cg::this_cluster().sync()):
// - after initialization, what other threads need is the mbarriers, and
//   fence.mbarrier_init.release.cluster before the arrive publishes them (the pattern PTX gives
//   for it); the rest a kernel writes to shared memory before it is read back by its own thread
//   (the stage's gamma and beta, layer norm's column accumulators);
// - at the exit, what the barrier must keep alive is each block's shared memory for the others'
//   st.async, and every such write has landed before its receiver's last mailbox wait returned,
//   which comes before the receiver's arrive.
// ncu of 1.21.0 (an H200, layer and batch norm's forward at 64K columns, clusters of 8 in 16
// waves, about 8.5 rows a cluster) put 5.8-6.7% of the warps' stall samples on those two
// barriers' MEMBAR / ERRBAR (the "membar" stalls of every cluster kernel) and 3-4% more on their
// waits. Relaxed, the same kernels ran 888 / 864 us against 922 / 904, and against 1.21.0 in one
// session (ours/copy, two runs each) layer norm's forward at 64K went from 0.885-0.886 to
// 0.900-0.904, batch norm's from 0.894-0.895 to 0.908-0.910, its backward from 0.929-0.933 to
// 0.959-0.966 (conformance/results/2026-12-03-h200-kernels-1.22.0/, device/kernels/README.md).
// kRelease: the arrive with release semantics, as cg::this_cluster().sync() (the softmax
// family's forward keeps it, softmax_cluster.cuh).
template <bool kRelease = false>
__device__ __forceinline__ void cluster_barrier() {
  if constexpr (kRelease) {
    cg::this_cluster().sync();
  } else {
    cuda::ptx::barrier_cluster_arrive(cuda::ptx::sem_relaxed);
    cuda::ptx::barrier_cluster_wait();
  }
}

// Before the first exchange, by all threads: no block sends before every block's mbarriers are
// initialized.
template <int W, bool kRelease = false>
__device__ __forceinline__ void mailbox_open(Mailbox<W>& mb) {
  if (threadIdx.x == 0) {
    cuda::ptx::mbarrier_init(&mb.full[0], 1);
    cuda::ptx::mbarrier_init(&mb.full[1], 1);
    cuda::ptx::fence_mbarrier_init(cuda::ptx::sem_release, cuda::ptx::scope_cluster);
  }
  cluster_barrier<kRelease>();
}

// The exchange of the cluster's turn-th row (turn = 0, 1, 2, ...), by all threads: thread w < W
// passes word w of its block's partial. Returns the C partials in rank order.
template <int W>
__device__ __forceinline__ const double (*mailbox_exchange(Mailbox<W>& mb, double word,
                                                           unsigned turn))[W] {
  cg::cluster_group cl = cg::this_cluster();
  const unsigned p = turn & 1u, C = cl.num_blocks(), rank = cl.block_rank();
  if (threadIdx.x == 0) {  // the phase's one arrival, expecting every block's bytes
    cuda::ptx::mbarrier_arrive_expect_tx(cuda::ptx::sem_relaxed, cuda::ptx::scope_cluster,
                                         cuda::ptx::space_shared, &mb.full[p],
                                         static_cast<uint32_t>(C * W * sizeof(double)));
  }
  if (threadIdx.x < W) {
    for (unsigned k = 0; k < C; ++k) {
      cuda::ptx::st_async(cl.map_shared_rank(&mb.slot[p][rank][threadIdx.x], k), word,
                          cl.map_shared_rank(&mb.full[p], k));
    }
  }
  while (!cuda::ptx::mbarrier_try_wait_parity(cuda::ptx::sem_acquire, cuda::ptx::scope_cluster,
                                              &mb.full[p], (turn >> 1) & 1u)) {
  }
  return mb.slot[p];
}

// The warps' partials of K sums, in two sets by row parity (as WarpParts in max_sum.cuh). One
// set would be enough: a warp writes the next row's partials only after its block's own partial
// has reached the mailbox, which threads q < K send after reading this row's. compute-sanitizer's
// racecheck cannot see that order through the mailbox and reported a hazard a launch (kernels
// 1.9.6, ln_bwd_cluster); with two sets it reports none, at no measured cost.
template <int K>
struct WarpPartials {
  double set[2][K][32];  // [row parity][sum][warp]
};

// Block partial in warp order (thread 0 adds the warps' sums), then the cluster's partials in
// rank order.
__device__ __forceinline__ double cluster_sum(double v, WarpPartials<1>& partials, Mailbox<1>& mb,
                                              unsigned turn) {
  double* const warps = partials.set[turn & 1u][0];
  for (unsigned off = 16; off != 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
  if ((threadIdx.x & 31u) == 0) warps[threadIdx.x >> 5] = v;
  __syncthreads();
  double b = 0.0;
  if (threadIdx.x == 0) {
    b = warps[0];
    for (unsigned w = 1; w < (blockDim.x >> 5); ++w) b += warps[w];
  }
  const double (*part)[1] = mailbox_exchange(mb, b, turn);
  double r = part[0][0];
  for (unsigned k = 1; k < cg::this_cluster().num_blocks(); ++k) r += part[k][0];
  return r;
}

// K independent sums with one exchange: each is added in exactly cluster_sum's order, so the
// results are bit for bit those of K calls.
template <int K>
__device__ __forceinline__ void cluster_sums(double (&v)[K], WarpPartials<K>& partials,
                                             Mailbox<K>& mb, unsigned turn) {
  double(*const warps)[32] = partials.set[turn & 1u];
  for (unsigned off = 16; off != 0; off >>= 1) {
#pragma unroll
    for (int q = 0; q < K; ++q) v[q] += __shfl_xor_sync(0xffffffffu, v[q], off);
  }
  if ((threadIdx.x & 31u) == 0) {
#pragma unroll
    for (int q = 0; q < K; ++q) warps[q][threadIdx.x >> 5] = v[q];
  }
  __syncthreads();
  double b = 0.0;
  if (threadIdx.x < K) {
    const unsigned q = threadIdx.x;
    b = warps[q][0];
    for (unsigned w = 1; w < (blockDim.x >> 5); ++w) b += warps[q][w];
  }
  const double (*part)[K] = mailbox_exchange(mb, b, turn);
  const unsigned C = cg::this_cluster().num_blocks();
#pragma unroll
  for (int q = 0; q < K; ++q) {
    double r = part[0][q];
    for (unsigned k = 1; k < C; ++k) r += part[k][q];
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

// K scalars of a row (batch norm's gamma, beta, inv_std of the row's channel), loaded one row
// ahead: the loads of the cluster's next row are issued as the current row starts, so they have
// a whole row to arrive. Loaded as their own row starts, they come from L2 (the previous row's
// exchange ends in a cluster-scope acquire, which invalidates L1), and the row's first use of
// them waits for L2: batch norm's forward uses gamma and beta right after its exchange, its
// backward uses gamma in its first sums.
// Measured on an H200 (ours/copy, two or three runs each in four calls, each against the kernels
// without it in the same call: candidates P and PB in
// tools/bench/results/2026-12-03-h200-1.21.0-candidates/, then the same-session runs in
// conformance/results/2026-12-03-h200-kernels-1.21.0/): batch norm's forward at 64K columns
// 0.865-0.890 -> 0.888-0.903; its backward and every other cluster kernel within the runs'
// spread. Loading layer norm's shift (an entry of the row, used right after the row's stage is
// read) one row ahead as well measured 0.005-0.01 slower for layer norm's forward at 64K
// (candidate P there), so the layer norm kernels load it as before.
template <int K>
struct RowScalars {
  float v[K];
  template <class Load>
  __device__ __forceinline__ void start(size_t row, size_t rows, Load load) {
#pragma unroll
    for (int q = 0; q < K; ++q) v[q] = 0.0f;
    if (row < rows) load(row, v);
  }
  // Gives this row's scalars in `now` and issues the loads of row `next`'s.
  template <class Load>
  __device__ __forceinline__ void next(size_t next, size_t rows, Load load, float (&now)[K]) {
#pragma unroll
    for (int q = 0; q < K; ++q) now[q] = v[q];
    if (next < rows) load(next, v);
  }
};

// ---------------------------------------------------------------------------------------------
// Host side. A row of more than kClusterThreads threads' registers takes a cluster, since a
// block-row of more than 512 threads (one block a multiprocessor, 64 registers a thread at 1024
// threads) has nothing to overlap its reductions with. The cluster's blocks are as narrow as
// the caller asks (`narrow`, at most 512 threads) where 8 of them hold the row, so that a
// multiprocessor runs several blocks of different rows and one's loads overlap the others'
// reductions and exchanges; longer rows take blocks twice as wide, up to 1024 threads; past
// 8 x 1024 x nmax units, the stream kernels.
constexpr size_t kClusterThreads = 512;
// The softmax family's forward and cross-entropy ask for blocks of 256 threads, four to a
// multiprocessor. Measured on an H200 (ours/copy, one run, 2 repeats, against 512): softmax
// forward 0.837 -> 0.869 at 32K columns and 0.821 -> 0.868 at 64K, log-softmax 0.833 -> 0.867
// and 0.813 -> 0.861, cross-entropy forward 0.853 -> 0.868 at 16K and 0.897 -> 0.916 at 32K.
// The norms keep 512: at 256, batch norm's backward lost 0.03 at 16K and 0.02 at 32K, and the
// others moved by less than 0.01.
constexpr size_t kClusterNarrowThreads = 256;
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
inline bool plan_cluster(uint32_t cols, int nmax4, ClusterTile& ct,
                         size_t narrow = kClusterThreads) {
  if (!kUseClusters) return false;
  ct.V = cols % 4 == 0 ? 4 : 1;
  const size_t nmax = ct.V == 4 ? nmax4 : 2 * nmax4;
  const size_t units = ceil_div(cols, static_cast<size_t>(ct.V));
  const size_t half = kClusterThreads * nmax, full = 1024 * nmax;
  if (units <= half || (!kClusterTakesBigBlocks && units <= full)) return false;
  size_t per_block = narrow * nmax;
  while (units > kMaxCluster * per_block && per_block < full) per_block *= 2;
  if (units > kMaxCluster * per_block) return false;
  ct.C = static_cast<unsigned>(ceil_div(units, per_block));
  ct.T = static_cast<unsigned>(ceil_div(ceil_div(units, ct.C * nmax), 32) * 32);
  return true;
}

// One cluster per row at a time, clusters striding over the rows; the number of clusters
// does not affect a row's result (a row is computed by one cluster alone). From the shape only
// (rows and the tile, which comes from cols), never from a device query, so a sum over all rows
// (the cross-entropy loss) is repeatable too.
//
// About kClusterWaves waves of the clusters an H200 holds at once: its kAssumedSMs (common.cuh)
// each take 1024 / T blocks of these kernels (64 registers a thread, __launch_bounds__(1024,
// 1)), C blocks a cluster. Up to 1.14.0 the count was 1024 whatever the tile. Measured on an
// H200 (ours/copy, two runs each, with 256 / 512 / 1024 / 2048 / 4096 clusters;
// tools/bench/results/2026-12-02-h200-1.15.0-cluster-counts/), every tile was fastest at the
// count nearest 16 waves or at the next one tried. Fewer clusters leave a larger partial last
// wave; more take too few rows each, and a cluster's first row has no prefetch. Two, four and
// eight waves (from cudaOccupancyMaxActiveClusters) measured slower than 1024 clusters for most
// tiles.
// - Blocks of 256 threads, 4 a cluster (2112 clusters, 124 fit at once): softmax forward at 32K
//   columns 0.870 -> 0.885 with 2048; cross-entropy forward at 16K 0.866 -> 0.907 (0.925 with
//   4096).
// - Blocks of 512, 8 a cluster (528, 30 fit), at 64K columns: layer norm forward, batch norm
//   forward and backward, cross-entropy forward 0.852 / 0.846 / 0.822 / 0.825 -> 0.858 / 0.854
//   / 0.841 / 0.855 with 512.
// - Blocks of 256, 8 a cluster (1056, 62 fit): 1024 was already the fastest of the five.
constexpr size_t kClusterWaves = 16;

inline size_t cluster_count(size_t rows, const ClusterTile& ct) {
  const size_t blocks_per_sm = ct.T >= 1024 ? 1 : 1024 / ct.T;
  const size_t g = kClusterWaves * kAssumedSMs * blocks_per_sm / ct.C;
  if (rows == 0) return 1;
  return rows < g ? rows : g;
}

// Returns launch(Int<N>, Int<V>, Bool<kVec>) for a cluster tile of up to N4 units of 4 floats a
// thread: N4 units of 4 read 16 bytes at a time (vec) or one float at a time, or 2 * N4 scalar
// units (cols % 4 != 0).
template <int N4, class Launch>
bool launch_cluster_form(const ClusterTile& ct, bool vec, const Launch& launch) {
  if (ct.V == 4) {
    if (vec) return launch(Int<N4>{}, Int<4>{}, Bool<true>{});
    return launch(Int<N4>{}, Int<4>{}, Bool<false>{});
  }
  return launch(Int<2 * N4>{}, Int<1>{}, Bool<false>{});
}

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
  return launch_clusters(kernel, ct, cluster_count(rows, ct), 0, s, args...);
}

}  // namespace tapecheck_cuda
