// Where a cluster kernel (row_cluster.cuh) gets a row's units from: straight from global memory
// (DirectRows), or from a ring of shared-memory stages that bulk copies fill rows ahead
// (StagedRows). Either way each thread receives exactly the floats load_unit would give it, in
// the same registers, so a kernel's arithmetic, and with it every result bit, is the same.
//
// Why stages: a cluster row kernel has its row's loads in flight only from the start of the row
// to its first barrier. Through the reductions, cluster barriers and stores that follow, its
// multiprocessor asks nothing of HBM, and at 32K-64K columns the kernels ran at 0.72-0.80 of
// copy bandwidth (ncu on an H200, 1.3.1: long-scoreboard stalls, about half of DRAM bandwidth;
// the L2 prefetch of row_cluster.cuh recovered part of it). With stages, thread 0 of each block
// asks for the block's share of a row S rows before the block needs it (sm_90 TMA bulk copies,
// `cp.async.bulk` completing on an mbarrier): the copies need no registers and keep HBM busy
// through every barrier.
//
// The protocol, per block. Rows are the cluster's rows in order; the n-th of them (n = 0, 1,
// ...) goes to stage n % S, whose barrier completes its phase (n / S) once the copies have
// landed. Thread 0 fills stages 0..S-1 first; each thread waits for stage n % S's phase, reads
// its units, and once every thread of the block has passed the kernel's first block barrier of
// the row (the reduction's), no thread reads that stage again for row n, so thread 0 refills it
// with row n + S. Only the 16-byte path stages (cols % 4 == 0, aligned pointers): bulk copies
// need 16-byte addresses and sizes.
#pragma once

#include <type_traits>

#include "row_cluster.cuh"

namespace tapecheck_cuda {

// Global loads, as every cluster kernel did before stages; the next row's L2 prefetch where
// kPrefetch (row_cluster.cuh).
template <int NIn, int V, bool kVec, bool kPrefetch>
struct DirectRows {
  static constexpr int kStages = 0;
  const float* in[NIn];
  size_t rows, clusters;
  uint32_t cols;

  __device__ void start(size_t /*first*/) const {}
  __device__ void wait(unsigned /*n*/) const {}
  // Unit at element j of row `row` (base = row * cols) of input `k`.
  __device__ void load(int k, size_t base, size_t j, unsigned /*i*/, unsigned /*n*/,
                       float (&o)[V]) const {
    load_unit<V, kVec>(in[k], base + j, o);
  }
  // After the row's loads are issued.
  __device__ void loaded(size_t row) const {
#pragma unroll
    for (int k = 0; k < NIn; ++k) prefetch_row_share<kVec && kPrefetch>(in[k], row + clusters, rows, cols);
  }
  // After the row's first block barrier.
  __device__ void release(size_t /*row*/, unsigned /*n*/) const {}
};

// Shared-memory address of a generic pointer to shared memory (what bulk copies and mbarriers
// take).
__device__ __forceinline__ uint32_t shared_address(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// S stages of NIn inputs, each input's share `share` floats: N chunks of T units (chunk i holds
// the units i * C * T + rank * T + t, t < T, that exist), laid out as the threads read them.
template <int S, int NIn>
struct StagedRows {
  static_assert(S >= 1, "at least one stage");
  static constexpr int kStages = S;
  const float* in[NIn];
  size_t rows, clusters;
  uint32_t cols;
  float* data;      // dynamic shared memory: S * NIn * share floats
  uint64_t* full;   // S mbarriers in shared memory
  uint32_t share;   // floats of one input's share: N * T * 4
  unsigned N, T, RT, rank;

  __device__ const float* stage(unsigned n, int k) const {
    return data + (static_cast<size_t>(n % S) * NIn + k) * share;
  }

  // Every thread: barriers initialized, stages 0..S-1 asked for (rows first, first + clusters,
  // ...). Ends with a block barrier.
  __device__ void start(size_t first) {
    if (threadIdx.x == 0) {
#pragma unroll
      for (int s = 0; s < S; ++s) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(shared_address(&full[s])));
      }
      asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
#pragma unroll
      for (int s = 0; s < S; ++s) fill(static_cast<unsigned>(s), first + static_cast<size_t>(s) * clusters);
    }
    __syncthreads();
  }

  // Thread 0: row `row` (if it exists) into the stage of the cluster's n-th row.
  __device__ void fill(unsigned n, size_t row) const {
    if (row >= rows) return;
    const uint32_t units = cols / 4;
    uint32_t bytes = 0;
    for (unsigned i = 0; i < N; ++i) {
      const uint32_t u0 = i * RT + rank * T;
      if (u0 < units) bytes += ::min(T, units - u0) * 16u;
    }
    const uint32_t bar = shared_address(&full[n % S]);
    // The stage's previous row was read through the generic proxy; the copies write through
    // the async proxy.
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar),
                 "r"(bytes * NIn)
                 : "memory");
#pragma unroll
    for (int k = 0; k < NIn; ++k) {
      const float* src = in[k] + row * cols;
      float* dst = data + (static_cast<size_t>(n % S) * NIn + k) * share;
      for (unsigned i = 0; i < N; ++i) {
        const uint32_t u0 = i * RT + rank * T;
        if (u0 >= units) break;
        asm volatile(
            "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::
                "r"(shared_address(dst + static_cast<size_t>(i) * T * 4)),
            "l"(src + static_cast<size_t>(u0) * 4), "r"(::min(T, units - u0) * 16u), "r"(bar)
            : "memory");
      }
    }
  }

  __device__ void wait(unsigned n) const {
    const uint32_t bar = shared_address(&full[n % S]);
    const uint32_t parity = (n / S) & 1u;
    uint32_t ready = 0;
    while (!ready) {
      asm volatile(
          "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
          " selp.u32 %0, 1, 0, p;\n}\n"
          : "=r"(ready)
          : "r"(bar), "r"(parity)
          : "memory");
    }
  }

  __device__ void load(int k, size_t /*base*/, size_t /*j*/, unsigned i, unsigned n,
                       float (&o)[4]) const {
    const float4 q =
        *reinterpret_cast<const float4*>(stage(n, k) + (static_cast<size_t>(i) * T + threadIdx.x) * 4);
    o[0] = q.x;
    o[1] = q.y;
    o[2] = q.z;
    o[3] = q.w;
  }
  __device__ void loaded(size_t /*row*/) const {}
  __device__ void release(size_t row, unsigned n) const {
    if (threadIdx.x == 0) fill(n, row + static_cast<size_t>(S) * clusters);
  }
};

// The dynamic shared memory of S stages of NIn inputs, N units of 4 a thread, for a tile.
inline size_t staged_bytes(int S, int NIn, int N, const ClusterTile& ct) {
  return static_cast<size_t>(S) * NIn * N * ct.T * 4 * sizeof(float);
}

// S == 0: DirectRows; otherwise StagedRows of S stages (the 16-byte path only).
template <int S, int NIn, int V, bool kVec, bool kPrefetch>
using RowSource = std::conditional_t<(S > 0), StagedRows<(S > 0 ? S : 1), NIn>,
                                     DirectRows<NIn, V, kVec, kPrefetch>>;

// The row source of a cluster kernel whose threads hold N units of V floats; `in` are its
// inputs, in the order its loads name them; `full` S mbarriers in shared memory (unused when
// S == 0). Call start() before the row loop.
template <int S, int NIn, int V, bool kVec, bool kPrefetch>
__device__ __forceinline__ RowSource<S, NIn, V, kVec, kPrefetch> make_rows(
    const float* const (&in)[NIn], size_t rows, uint32_t cols, unsigned N, uint64_t* full) {
  cg::cluster_group cl = cg::this_cluster();
  RowSource<S, NIn, V, kVec, kPrefetch> r;
#pragma unroll
  for (int k = 0; k < NIn; ++k) r.in[k] = in[k];
  r.rows = rows;
  r.cols = cols;
  r.clusters = gridDim.x / cl.num_blocks();
  if constexpr (S > 0) {
    static_assert(V == 4 && kVec, "only the 16-byte path stages");
    extern __shared__ __align__(16) float stage_data[];
    r.data = stage_data;
    r.full = full;
    r.N = N;
    r.T = blockDim.x;
    r.RT = cl.num_blocks() * blockDim.x;
    r.rank = cl.block_rank();
    r.share = N * blockDim.x * 4;
  }
  return r;
}

// Launches `kernel` with S stages of NIn inputs of N units of 4 a thread (S == 0: no
// stages). False when the configuration is refused: the caller falls back to global loads.
//
// One wave of clusters, each taking many rows: a cluster fills its stages at its start, so a
// cluster that lives for a few rows (row_cluster.cuh's grid of up to 1024 clusters, many waves)
// waits a full memory latency per wave with nothing else in flight. Measured on an H200 with
// that grid, stages made every cluster kernel slower (softmax at 64K columns: 0.80 -> 0.55 of
// copy bandwidth). A row's result does not depend on which cluster computes it, so the count
// may come from the device (cudaOccupancyMaxActiveClusters); kernels that sum across rows
// (the cross-entropy loss) do not stage.
template <int S, int NIn, int N, class... KArgs, class... Args>
bool launch_staged(void (*kernel)(KArgs...), const ClusterTile& ct, size_t rows, cudaStream_t s,
                   Args... args) {
  if constexpr (S == 0) {
    return false;
  } else {
    const size_t smem = staged_bytes(S, NIn, N, ct);
    // The limit is raised to the most a block may have, the same value from every caller (so
    // that concurrent callers with other widths do not lower it under each other).
    int device = 0, optin = 0;
    cudaFuncAttributes fa{};
    if (cudaGetDevice(&device) != cudaSuccess ||
        cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device) != cudaSuccess ||
        cudaFuncGetAttributes(&fa, kernel) != cudaSuccess ||
        smem + fa.sharedSizeBytes > static_cast<size_t>(optin) ||
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             optin - static_cast<int>(fa.sharedSizeBytes)) != cudaSuccess) {
      cudaGetLastError();
      return false;
    }
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(ct.C);
    cfg.blockDim = dim3(ct.T);
    cfg.dynamicSmemBytes = smem;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = ct.C;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    int resident = 0;
    if (cudaOccupancyMaxActiveClusters(&resident, kernel, &cfg) != cudaSuccess || resident < 1) {
      cudaGetLastError();
      return false;
    }
    size_t clusters = cluster_count(rows);
    if (clusters > static_cast<size_t>(resident)) clusters = static_cast<size_t>(resident);
    return launch_clusters(kernel, ct, clusters, smem, s, args...);
  }
}

}  // namespace tapecheck_cuda
