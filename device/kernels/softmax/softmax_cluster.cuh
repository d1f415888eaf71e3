// softmax / log-softmax forward and backward for rows held across a cluster (row_cluster.cuh):
// the arithmetic of softmax_fwd_regs / softmax_bwd_regs, unit for unit, with the row's threads
// spread over C blocks. Read once, written once; one exchange a row (the forward's max
// and sum are reduced together, max_sum.cuh).
#pragma once

#include "common/row_cluster.cuh"
#include "softmax/softmax_bwd.cuh"
#include "softmax/softmax_fwd.cuh"

namespace tapecheck_cuda {

// The forward's cluster barrier before exit arrives with release semantics, where every other
// cluster kernel's arrives relaxed (row_cluster.cuh, cluster_barrier); its barrier after
// initialization arrives relaxed, as theirs. Relaxed at the exit too, the forward reads slower
// at 32K columns in back-to-back launches (not under ncu, which times it faster); the cause is
// not known.
// Exit relaxed: 0.944-0.949 -> 0.926-0.933 of copy speed at 32K (CHANGELOG 1.22.0).
// Open relaxed: softmax forward at 64K 0.936-0.940 -> 0.945-0.952 (CHANGELOG 1.22.1).
constexpr bool kSoftmaxFwdReleaseAtOpen = false;
constexpr bool kSoftmaxFwdReleaseAtExit = true;

template <bool kLog, int N, int V, bool kVec>
__global__ void __launch_bounds__(1024, 1)
    softmax_fwd_cluster(const float* __restrict__ x, float* __restrict__ y, size_t rows,
                        uint32_t cols) {
  __shared__ WarpParts parts;
  __shared__ Mailbox<2> mail;  // one exchange a row
  cg::cluster_group cl = cg::this_cluster();
  const unsigned C = cl.num_blocks();
  const unsigned RT = C * blockDim.x;  // threads of a row
  const unsigned lane = cl.block_rank() * blockDim.x + threadIdx.x;
  const size_t clusters = gridDim.x / C;
  unsigned turn = 0;  // the cluster's rows so far
  mailbox_open<2, kSoftmaxFwdReleaseAtOpen>(mail);

  // Cluster-uniform loop: every block of the cluster takes part in every barrier.
  for (size_t row = blockIdx.x / C; row < rows; row += clusters, ++turn) {
    const size_t base = row * cols;
    float v[N][V];
    bool has[N];
    float m = -CUDART_INF_F;
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const size_t j = static_cast<size_t>(i * RT + lane) * V;
      has[i] = j < cols;
      if (has[i]) load_unit<V, kVec>(x, base + j, v[i]);
    }
    prefetch_row_share<kVec && kPrefetchForward>(x, row + clusters, rows, cols);
#pragma unroll
    for (int i = 0; i < N; ++i) {
      if (has[i]) {
#pragma unroll
        for (int k = 0; k < V; ++k) m = fmax_nan(m, v[i][k]);
      }
    }
    // One reduction of the warps' parts across the cluster (max_sum.cuh).
    const MaxSum part = warp_part<kLog>(v, has, m);
    const FwdScale r = fwd_scale_of_part<kLog>(cluster_max_sum(part, parts, mail, turn), part.m);
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const size_t j = static_cast<size_t>(i * RT + lane) * V;
      if (has[i]) {
        float o[V];
#pragma unroll
        for (int k = 0; k < V; ++k) o[k] = fwd_out<kLog>(r, v[i][k]);
        store_unit<V, kVec>(y, base + j, o);
      }
    }
  }
  // No block leaves while another's sends may still be in flight.
  cluster_barrier<kSoftmaxFwdReleaseAtExit>();
}

template <bool kLog, int N, int V, bool kVec>
__global__ void __launch_bounds__(1024, 1)
    softmax_bwd_cluster(const float* __restrict__ y, const float* __restrict__ dy,
                        float* __restrict__ dx, size_t rows, uint32_t cols) {
  __shared__ WarpPartials<1> wsum;
  __shared__ Mailbox<1> mail;  // one exchange a row
  cg::cluster_group cl = cg::this_cluster();
  const unsigned C = cl.num_blocks();
  const unsigned RT = C * blockDim.x;
  const unsigned lane = cl.block_rank() * blockDim.x + threadIdx.x;
  const size_t clusters = gridDim.x / C;
  unsigned turn = 0;  // the cluster's rows so far
  mailbox_open(mail);

  for (size_t row = blockIdx.x / C; row < rows; row += clusters, ++turn) {
    const size_t base = row * cols;
    float a[N][V], b[N][V];
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const size_t j = static_cast<size_t>(i * RT + lane) * V;
      if (j < cols) {
        load_unit<V, kVec, Reads::Once>(y, base + j, a[i]);
        load_unit<V, kVec, Reads::Once>(dy, base + j, b[i]);
      }
    }
    prefetch_row_share<kVec && kPrefetchBackward>(y, row + clusters, rows, cols);
    prefetch_row_share<kVec && kPrefetchBackward>(dy, row + clusters, rows, cols);
    double s = 0.0;
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const size_t j = static_cast<size_t>(i * RT + lane) * V;
      if (j < cols) s += static_cast<double>(bwd_unit_term<kLog, V>(a[i], b[i]));
    }
    const float sf = static_cast<float>(cluster_sum(s, wsum, mail, turn));
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const size_t j = static_cast<size_t>(i * RT + lane) * V;
      if (j < cols) {
        float o[V];
#pragma unroll
        for (int k = 0; k < V; ++k) o[k] = bwd_out<kLog>(a[i][k], b[i][k], sf);
        store_unit<V, kVec>(dx, base + j, o);
      }
    }
  }
  cluster_barrier();
}

// Host side: true when launched; false leaves the row to the stream kernels.
template <bool kLog, int kNmax4>
bool softmax_fwd_clustered(cudaStream_t s, size_t rows, uint32_t cols, const float* x, float* y) {
  ClusterTile ct;
  if (!plan_cluster(cols, kNmax4, ct, kClusterNarrowThreads)) return false;
  const bool vec = aligned16(x) && aligned16(y);
  return launch_cluster_form<kNmax4>(ct, vec, [&](auto n, auto v, auto kvec) {
    return launch_cluster(softmax_fwd_cluster<kLog, n, v, kvec>, ct, rows, s, x, y, rows, cols);
  });
}

template <bool kLog, int kNmax4>
bool softmax_bwd_clustered(cudaStream_t s, size_t rows, uint32_t cols, const float* y,
                           const float* dy, float* dx) {
  ClusterTile ct;
  if (!plan_cluster(cols, kNmax4, ct)) return false;
  const bool vec = aligned16(y) && aligned16(dy) && aligned16(dx);
  return launch_cluster_form<kNmax4>(ct, vec, [&](auto n, auto v, auto kvec) {
    return launch_cluster(softmax_bwd_cluster<kLog, n, v, kvec>, ct, rows, s, y, dy, dx, rows,
                          cols);
  });
}

}  // namespace tapecheck_cuda
