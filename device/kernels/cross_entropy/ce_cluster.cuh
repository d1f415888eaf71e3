// crossEntropy (inner == 1) for slices held across a cluster (row_cluster.cuh): the arithmetic
// of ce_fwd_regs / ce_bwd_regs (ce_tiles.cuh), unit for unit, with the slice's threads spread
// over C blocks, so logits and target are read once (the generic engine reads them again for
// every stage). The forward reduces the row's maximum and sum of exps together, with one
// exchange (max_sum.cuh), and leaves one loss partial per block, as ce_fwd_regs does.
#pragma once

#include "cross_entropy/ce_tiles.cuh"
#include "common/cluster_stage.cuh"
#include "softmax/max_sum.cuh"
#include "common/row_cluster.cuh"

namespace tapecheck_cuda {

// The forward's 16-byte path stages its next row's logits and target in shared memory
// (cluster_stage.cuh); the backward gains nothing from it and does not.
// Forward at 64K: 0.863-0.864 -> 0.882 of copy speed (CHANGELOG 1.16.0).
constexpr bool kCeFwdClusterStage = true;

template <int N, int V, bool kVec>
__global__ void __launch_bounds__(1024, 1)
    ce_fwd_cluster(const float* __restrict__ x, const float* __restrict__ target,
                   float* __restrict__ logp, double* __restrict__ partial, size_t rows,
                   uint32_t cols) {
  constexpr bool kStaged = kVec && kCeFwdClusterStage;
  __shared__ WarpParts parts;
  __shared__ Mailbox<2> mail;  // one exchange a row
  __shared__ double wloss[32];
  __shared__ uint64_t stage_full;
  extern __shared__ __align__(128) float4 stage_units[];
  cg::cluster_group cl = cg::this_cluster();
  const unsigned C = cl.num_blocks();
  const unsigned RT = C * blockDim.x;
  const unsigned lane = cl.block_rank() * blockDim.x + threadIdx.x;
  const size_t clusters = gridDim.x / C;
  double loss = 0.0;
  unsigned turn = 0;  // the cluster's rows so far
  ClusterRowStage<2, N> stage{stage_units, &stage_full};
  const float* const src[2] = {x, target};
  if (kStaged && threadIdx.x == 0) stage.init();
  mailbox_open(mail);
  if (kStaged && threadIdx.x == 0 && blockIdx.x / C < rows) stage.fill(src, blockIdx.x / C, cols);

  for (size_t row = blockIdx.x / C; row < rows; row += clusters, ++turn) {
    const size_t base = row * cols;
    float v[N][V], t[N][V];
    bool has[N];
#pragma unroll
    for (int i = 0; i < N; ++i) has[i] = static_cast<size_t>(i * RT + lane) * V < cols;
    if constexpr (kStaged) {
      stage.wait();
      stage.take(0, v, lane, RT, cols);
      stage.take(1, t, lane, RT, cols);
      stage.refill(src, row + clusters, rows, cols);
    } else {
#pragma unroll
      for (int i = 0; i < N; ++i) {
        const size_t j = static_cast<size_t>(i * RT + lane) * V;
        if (has[i]) {
          load_unit<V, kVec, Reads::Once>(x, base + j, v[i]);
          load_unit<V, kVec, Reads::Once>(target, base + j, t[i]);
        }
      }
      prefetch_row_share<kVec && kPrefetchForward>(x, row + clusters, rows, cols);
      prefetch_row_share<kVec && kPrefetchForward>(target, row + clusters, rows, cols);
    }
    float m = -CUDART_INF_F;
#pragma unroll
    for (int i = 0; i < N; ++i) {
      if (has[i]) {
#pragma unroll
        for (int k = 0; k < V; ++k) m = fmax_nan(m, v[i][k]);
      }
    }
    // The row's maximum and sum of exps in one reduction across the cluster (max_sum.cuh).
    const MaxSum row_ms = cluster_max_sum(warp_part<true>(v, has, m), parts, mail, turn);
    m = row_ms.m;
    const bool bad = !isfinite(m);
    const float ls = static_cast<float>(log(row_ms.s));
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const size_t j = static_cast<size_t>(i * RT + lane) * V;
      if (j < cols) {
        float lp[V], tl[V];
#pragma unroll
        for (int k = 0; k < V; ++k) {
          lp[k] = bad ? CUDART_NAN_F : (v[i][k] - m) - ls;
          tl[k] = t[i][k] * lp[k];
        }
        store_unit<V, kVec>(logp, base + j, lp);
        loss += static_cast<double>(unit_sum<V>(tl));
      }
    }
  }
  // The block's threads in a fixed order: a warp butterfly, then the warps in index order.
  loss = row_sum<true>(loss, blockDim.x, wloss);
  if (threadIdx.x == 0) partial[blockIdx.x] = loss;
  cluster_barrier();  // no block leaves while another's sends may still be in flight
}

template <int N, int V, bool kVec>
__global__ void __launch_bounds__(1024, 1)
    ce_bwd_cluster(const float* __restrict__ dloss, const float* __restrict__ logp,
                   const float* __restrict__ target, float* __restrict__ dlogits,
                   float* __restrict__ dtarget, size_t rows, uint32_t cols, double denom) {
  __shared__ WarpPartials<1> wsum;
  __shared__ Mailbox<1> mail;  // one exchange a row
  cg::cluster_group cl = cg::this_cluster();
  const unsigned C = cl.num_blocks();
  const unsigned RT = C * blockDim.x;
  const unsigned lane = cl.block_rank() * blockDim.x + threadIdx.x;
  const size_t clusters = gridDim.x / C;
  const float scale = static_cast<float>(static_cast<double>(__ldg(dloss)) / denom);
  unsigned turn = 0;  // the cluster's rows so far
  mailbox_open(mail);

  for (size_t row = blockIdx.x / C; row < rows; row += clusters, ++turn) {
    const size_t base = row * cols;
    float lp[N][V], t[N][V];
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const size_t j = static_cast<size_t>(i * RT + lane) * V;
      if (j < cols) {
        load_unit<V, kVec, Reads::Once>(logp, base + j, lp[i]);
        load_unit<V, kVec, Reads::Once>(target, base + j, t[i]);
      }
    }
    prefetch_row_share<kVec && kPrefetchBackward>(logp, row + clusters, rows, cols);
    prefetch_row_share<kVec && kPrefetchBackward>(target, row + clusters, rows, cols);
    double w = 0.0;
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const size_t j = static_cast<size_t>(i * RT + lane) * V;
      if (j < cols) w += static_cast<double>(unit_sum<V>(t[i]));
    }
    const float wf = static_cast<float>(cluster_sum(w, wsum, mail, turn));
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const size_t j = static_cast<size_t>(i * RT + lane) * V;
      if (j < cols) {
        float dl[V], dt[V];
#pragma unroll
        for (int k = 0; k < V; ++k) {
          dl[k] = scale * fmaf(expf(lp[i][k]), wf, -t[i][k]);
          dt[k] = -(scale * lp[i][k]);
        }
        store_unit<V, kVec>(dlogits, base + j, dl);
        if (dtarget != nullptr) store_unit<V, kVec>(dtarget, base + j, dt);
      }
    }
  }
  cluster_barrier();
}

// Host side. The forward's partials: one per block, cluster_count(rows, ct) * C of them; true
// when launched (count set), false leaves the slices to the generic engine.
inline bool ce_cluster_partials(uint32_t n, size_t rows, size_t& count) {
  ClusterTile ct;
  if (!plan_cluster(n, kCeUnits, ct, kClusterNarrowThreads)) return false;
  count = cluster_count(rows, ct) * ct.C;
  return true;
}

inline bool ce_fwd_clustered(cudaStream_t s, size_t rows, uint32_t n, const float* x,
                             const float* target, float* logp, double* partial) {
  ClusterTile ct;
  if (!plan_cluster(n, kCeUnits, ct, kClusterNarrowThreads)) return false;
  const bool vec = aligned16(x) && aligned16(target) && aligned16(logp);
  return launch_cluster_form<kCeUnits>(ct, vec, [&](auto units, auto v, auto kvec) {
    // The staged 16-byte path, or where the device refuses its shared memory, the plain one.
    if constexpr (kvec) {
      if (launch_cluster_with_stage<kCeFwdClusterStage>(
              ce_fwd_cluster<units, v, true>, ct, rows, ClusterRowStage<2, units>::bytes, s, x,
              target, logp, partial, rows, n)) {
        return true;
      }
    }
    return launch_cluster(ce_fwd_cluster<units, v, false>, ct, rows, s, x, target, logp, partial,
                          rows, n);
  });
}

inline bool ce_bwd_clustered(cudaStream_t s, size_t rows, uint32_t n, const float* dloss,
                             const float* logp, const float* target, float* dlogits,
                             float* dtarget, double denom) {
  ClusterTile ct;
  if (!plan_cluster(n, kCeUnits, ct, kClusterNarrowThreads)) return false;
  const bool vec = aligned16(logp) && aligned16(target) && aligned16(dlogits) &&
                   (dtarget == nullptr || aligned16(dtarget));
  return launch_cluster_form<kCeUnits>(ct, vec, [&](auto units, auto v, auto kvec) {
    return launch_cluster(ce_bwd_cluster<units, v, kvec>, ct, rows, s, dloss, logp, target,
                          dlogits, dtarget, rows, n, denom);
  });
}

}  // namespace tapecheck_cuda
