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
// Why not a cluster barrier after plain shared-memory writes: the barrier's arrive has release
// semantics, so it waits until each thread's earlier memory operations, the previous row's
// stores among them, are performed at cluster scope. st.async needs no release: the bytes
// themselves complete the receiver's phase.
// Mailboxes: every cluster kernel at 32K-64K columns +0.01-0.18 of copy speed (CHANGELOG 1.6.0).
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
// Relaxed: layer norm's forward at 64K 0.885 -> 0.900-0.904 of copy speed (CHANGELOG 1.22.0).
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
// racecheck cannot see that order through the mailbox; with two sets it reports no hazard, at no
// cost the bench can tell apart.
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
// barriers and stores that follow, HBM would idle (without it these kernels wait mostly on
// their loads, at about half of DRAM bandwidth). So right after issuing a row's
// loads, thread 0 of each block issues one bulk prefetch (sm_90 `cp.async.bulk.prefetch.L2`:
// no registers, no completion to wait on, no effect on any value) of its block's share of the
// row its cluster takes next, and that row's loads then hit L2. The shares are 1/C of the row
// each, in rank order, whoever loads them later. Only on the 16-byte path (kVec: cols % 4 == 0
// and aligned pointers), as the bulk prefetch needs 16-byte alignment and size. The backward
// kernels, with two inputs a row, do not prefetch.
// Forward at 64K: layer norm 0.645 -> 0.712 of copy speed; backward up to -0.09 (CHANGELOG 1.4.0).
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
// backward uses gamma in its first sums. Layer norm's shift stays loaded as its row starts:
// one row ahead, it is slower.
// Batch norm's forward at 64K: 0.865-0.890 -> 0.888-0.903 of copy speed (CHANGELOG 1.21.0).
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
// multiprocessor; the norms keep 512 (batch norm's backward is slower at 256).
// Softmax forward at 64K: 0.821 -> 0.868 of copy speed against 512 (CHANGELOG 1.6.1).
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
// 1)), C blocks a cluster. Fewer clusters leave a larger partial last wave; more take too few
// rows each, and a cluster's first row has no prefetch.
// Every tile fastest at or next to 16 waves of 256-4096 clusters tried (CHANGELOG 1.15.0).
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
