// Layer / batch normalization for rows held across a cluster (row_cluster.cuh): the
// arithmetic of norm_fwd_regs / norm_bwd_regs (norm_tiles.cuh, which launches these), unit
// for unit, with the row's threads spread over C blocks, so x (forward) or dy and xhat
// (backward) are read from HBM once instead of twice by the stream kernels. A row's sums are
// reduced together, with one exchange (row_cluster.cuh, cluster_sums).
#pragma once

#include "common/cluster_stage.cuh"
#include "norm/norm_math.cuh"
#include "common/row_cluster.cuh"

namespace tapecheck_cuda {

// The 16-byte paths stage their next row in shared memory (cluster_stage.cuh): x forward, dy
// and xhat backward.
// Batch norm's backward at 64K: 0.838-0.840 -> 0.933-0.936 of copy speed (CHANGELOG 1.16.0).
constexpr bool kNormClusterStage = true;

// Layer norm's staged forward keeps each thread's gamma and beta in shared memory, after the
// stage: a thread's columns are the same in every row, so it reads them once. Read from global
// memory in each row, they come from L2 after the exchange, whose cluster-scope acquire
// invalidates L1 (as ln_bwd_cluster.cuh's gamma, kLnGammaShared).
// Layer norm at 64K: 0.866-0.867 staged alone -> 0.882-0.886 of copy speed (CHANGELOG 1.16.0).
constexpr bool kLnFwdAffineShared = true;

// Layer norm's forward asks plan_cluster for blocks of this many threads, four a multiprocessor
// (64K columns still get 512: eight blocks of 256 do not hold the row).
// 32K on 8 x 256: 0.905-0.906 of copy speed, against 0.895-0.901 on 4 x 512 (CHANGELOG 1.22.2).
constexpr size_t kLayerNormClusterThreads = 256;

// A staged forward block's dynamic shared memory: the stage ([N][threads] units of 4 floats),
// then, for layer norm, gamma and beta ([2][N][threads] units, each read back only by the
// thread that wrote it).
template <bool kPerRow, int N>
__host__ __device__ constexpr size_t norm_fwd_cluster_smem(unsigned threads) {
  return ClusterRowStage<1, N>::bytes(threads) * (!kPerRow && kLnFwdAffineShared ? 3 : 1);
}

template <bool kPerRow, int N, int V, bool kVec>
__global__ void __launch_bounds__(1024, 1)
    norm_fwd_cluster(const float* __restrict__ x, const float* __restrict__ gamma,
                     const float* __restrict__ beta, float* __restrict__ y,
                     float* __restrict__ xhat, float* __restrict__ inv_std, size_t rows,
                     uint32_t cols, float eps) {
  constexpr bool kStaged = kVec && kNormClusterStage;
  constexpr bool kAffineShared = kStaged && !kPerRow && kLnFwdAffineShared;
  __shared__ WarpPartials<2> wsum;
  __shared__ Mailbox<2> mail;  // one exchange a row
  __shared__ uint64_t stage_full;
  extern __shared__ __align__(128) float4 stage_units[];
  cg::cluster_group cl = cg::this_cluster();
  const unsigned C = cl.num_blocks();
  const unsigned RT = C * blockDim.x;
  const unsigned lane = cl.block_rank() * blockDim.x + threadIdx.x;
  const size_t clusters = gridDim.x / C;
  const double n = static_cast<double>(cols);
  unsigned turn = 0;  // the cluster's rows so far
  ClusterRowStage<1, N> stage{stage_units, &stage_full};
  const float* const src[1] = {x};
  // kAffineShared: unit i's gamma at affine[i][t], its beta at affine[N + i][t].
  float4* const affine = stage_units + N * blockDim.x;
  if constexpr (kAffineShared) {
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const size_t j = static_cast<size_t>(i * RT + lane) * V;
      float g[V] = {0.0f, 0.0f, 0.0f, 0.0f}, b[V] = {0.0f, 0.0f, 0.0f, 0.0f};
      if (j < cols) {
        load_unit<V, kVec>(gamma, j, g);
        load_unit<V, kVec>(beta, j, b);
      }
      affine[i * blockDim.x + threadIdx.x] = make_float4(g[0], g[1], g[2], g[3]);
      affine[(N + i) * blockDim.x + threadIdx.x] = make_float4(b[0], b[1], b[2], b[3]);
    }
  }
  if (kStaged && threadIdx.x == 0) stage.init();
  mailbox_open(mail);
  if (kStaged && threadIdx.x == 0 && blockIdx.x / C < rows) stage.fill(src, blockIdx.x / C, cols);
  // Batch norm's gamma and beta of the channel, one row ahead (RowScalars, row_cluster.cuh).
  RowScalars<2> ahead;
  auto channel_affine = [&](size_t r, float (&s)[2]) {
    s[0] = __ldg(gamma + r);
    s[1] = __ldg(beta + r);
  };
  if constexpr (kPerRow) ahead.start(blockIdx.x / C, rows, channel_affine);

  for (size_t row = blockIdx.x / C; row < rows; row += clusters, ++turn) {
    const size_t base = row * cols;
    float affine_now[2] = {0.0f, 0.0f};
    if constexpr (kPerRow) ahead.next(row + clusters, rows, channel_affine, affine_now);
    // norm_math.cuh: ShiftedMoments. Loaded as the row starts: one row ahead (RowScalars) is
    // slower here.
    const float shift = __ldg(x + base);
    float v[N][V];
    if constexpr (kStaged) {
      stage.wait();
      stage.take(0, v, lane, RT, cols);
      stage.refill(src, row + clusters, rows, cols);
    } else {
#pragma unroll
      for (int i = 0; i < N; ++i) {
        const size_t j = static_cast<size_t>(i * RT + lane) * V;
        if (j < cols) load_unit<V, kVec>(x, base + j, v[i]);
      }
      prefetch_row_share<kVec && kPrefetchForward>(x, row + clusters, rows, cols);
    }
    ShiftedMoments mom;
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const size_t j = static_cast<size_t>(i * RT + lane) * V;
      if (j < cols) mom.add<V>(v[i], shift);
    }
    double sums[2] = {mom.s, mom.q};
    cluster_sums<2>(sums, wsum, mail, turn);
    const NormStats st = norm_stats(sums[0], sums[1], n, shift, eps);
    const float mhi = st.mean_hi, mlo = st.mean_lo, istd = st.inv_std;
    if (lane == 0) inv_std[row] = istd;

    const float gr = affine_now[0], br = affine_now[1];
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const size_t j = static_cast<size_t>(i * RT + lane) * V;
      if (j < cols) {
        float g[V], b[V], xh[V], o[V];
        if constexpr (kPerRow) {
#pragma unroll
          for (int k = 0; k < V; ++k) {
            g[k] = gr;
            b[k] = br;
          }
        } else if constexpr (kAffineShared) {
          const float4 gq = affine[i * blockDim.x + threadIdx.x];
          const float4 bq = affine[(N + i) * blockDim.x + threadIdx.x];
          g[0] = gq.x, g[1] = gq.y, g[2] = gq.z, g[3] = gq.w;
          b[0] = bq.x, b[1] = bq.y, b[2] = bq.z, b[3] = bq.w;
        } else {
          load_unit<V, kVec>(gamma, j, g);
          load_unit<V, kVec>(beta, j, b);
        }
#pragma unroll
        for (int k = 0; k < V; ++k) {
          xh[k] = ((v[i][k] - mhi) - mlo) * istd;
          o[k] = fmaf(xh[k], g[k], b[k]);
        }
        store_unit<V, kVec>(xhat, base + j, xh);
        store_unit<V, kVec>(y, base + j, o);
      }
    }
  }
  cluster_barrier();  // no block leaves while another's sends may still be in flight
}

// kPerRow (batch norm) carries four sums and writes dgamma[row], dbeta[row]; otherwise (layer
// norm) two, and the caller runs the column sums.
template <bool kPerRow, int N, int V, bool kVec>
__global__ void __launch_bounds__(1024, 1)
    norm_bwd_cluster(const float* __restrict__ dy, const float* __restrict__ xhat,
                     const float* __restrict__ inv_std, const float* __restrict__ gamma,
                     float* __restrict__ dx, float* __restrict__ dgamma, float* __restrict__ dbeta,
                     size_t rows, uint32_t cols) {
  constexpr int K = NormBwdSums<kPerRow>::K;  // reduced together: one exchange a row
  constexpr bool kStaged = kVec && kNormClusterStage;
  __shared__ WarpPartials<K> wsum;
  __shared__ Mailbox<K> mail;  // one exchange a row
  __shared__ uint64_t stage_full;
  extern __shared__ __align__(128) float4 stage_units[];
  cg::cluster_group cl = cg::this_cluster();
  const unsigned C = cl.num_blocks();
  const unsigned RT = C * blockDim.x;
  const unsigned lane = cl.block_rank() * blockDim.x + threadIdx.x;
  const size_t clusters = gridDim.x / C;
  const double n = static_cast<double>(cols);
  unsigned turn = 0;  // the cluster's rows so far
  ClusterRowStage<2, N> stage{stage_units, &stage_full};
  const float* const src[2] = {dy, xhat};
  if (kStaged && threadIdx.x == 0) stage.init();
  mailbox_open(mail);
  if (kStaged && threadIdx.x == 0 && blockIdx.x / C < rows) stage.fill(src, blockIdx.x / C, cols);
  // Batch norm's inv_std and gamma of the channel, one row ahead (RowScalars, row_cluster.cuh);
  // layer norm's inv_std as the row starts (it is first used after the exchange).
  RowScalars<2> ahead;
  auto channel_scalars = [&](size_t r, float (&s)[2]) {
    s[0] = __ldg(inv_std + r);
    s[1] = __ldg(gamma + r);
  };
  if constexpr (kPerRow) ahead.start(blockIdx.x / C, rows, channel_scalars);

  for (size_t row = blockIdx.x / C; row < rows; row += clusters, ++turn) {
    const size_t base = row * cols;
    float channel_now[2] = {0.0f, 0.0f};
    if constexpr (kPerRow) {
      ahead.next(row + clusters, rows, channel_scalars, channel_now);
    } else {
      channel_now[0] = __ldg(inv_std + row);
    }
    const float istd = channel_now[0];
    const float gr = channel_now[1];
    float d[N][V], h[N][V];
    double s_g = 0.0, s_gx = 0.0, s_d = 0.0, s_dx = 0.0;
    if constexpr (kStaged) {
      stage.wait();
      stage.take(0, d, lane, RT, cols);
      stage.take(1, h, lane, RT, cols);
      stage.refill(src, row + clusters, rows, cols);
    } else {
#pragma unroll
      for (int i = 0; i < N; ++i) {
        const size_t j = static_cast<size_t>(i * RT + lane) * V;
        if (j < cols) {
          load_unit<V, kVec>(dy, base + j, d[i]);
          load_unit<V, kVec>(xhat, base + j, h[i]);
        }
      }
      prefetch_row_share<kVec && kPrefetchBackward>(dy, row + clusters, rows, cols);
      prefetch_row_share<kVec && kPrefetchBackward>(xhat, row + clusters, rows, cols);
    }
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const size_t j = static_cast<size_t>(i * RT + lane) * V;
      if (j < cols) {
        float gm[V], g[V], gx[V];
        if constexpr (kPerRow) {
#pragma unroll
          for (int k = 0; k < V; ++k) gm[k] = gr;
        } else {
          load_unit<V, kVec>(gamma, j, gm);
        }
#pragma unroll
        for (int k = 0; k < V; ++k) {
          g[k] = d[i][k] * gm[k];
          gx[k] = g[k] * h[i][k];
        }
        s_g += static_cast<double>(unit_sum<V>(g));
        s_gx += static_cast<double>(unit_sum<V>(gx));
        if constexpr (kPerRow) {
          float dxh[V];
#pragma unroll
          for (int k = 0; k < V; ++k) dxh[k] = d[i][k] * h[i][k];
          s_d += static_cast<double>(unit_sum<V>(d[i]));
          s_dx += static_cast<double>(unit_sum<V>(dxh));
        }
      }
    }
    NormBwdSums<kPerRow> sums(s_g, s_gx, s_d, s_dx);
    cluster_sums<K>(sums.v, wsum, mail, turn);
    const float mean_g = static_cast<float>(sums.v[0] / n);
    const float mean_gx = static_cast<float>(sums.v[1] / n);
    if constexpr (kPerRow) {
      if (lane == 0) {
        dgamma[row] = static_cast<float>(sums.v[3]);
        dbeta[row] = static_cast<float>(sums.v[2]);
      }
    }
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const size_t j = static_cast<size_t>(i * RT + lane) * V;
      if (j < cols) {
        float gm[V], o[V];
        if constexpr (kPerRow) {
#pragma unroll
          for (int k = 0; k < V; ++k) gm[k] = gr;
        } else {
          load_unit<V, kVec>(gamma, j, gm);
        }
#pragma unroll
        for (int k = 0; k < V; ++k) {
          const float g = d[i][k] * gm[k];
          o[k] = istd * fmaf(-h[i][k], mean_gx, g - mean_g);
        }
        store_unit<V, kVec>(dx, base + j, o);
      }
    }
  }
  cluster_barrier();
}

// Host side: true when launched; false leaves the row to the stream kernels. N4: the units of
// 4 a thread holds (norm_tiles.cuh's kNormFwdUnits / kNormBwdUnits).
template <bool kPerRow, int N4>
bool norm_fwd_clustered(cudaStream_t s, size_t rows, uint32_t cols, float eps, const float* x,
                        const float* gamma, const float* beta, float* y, float* xhat,
                        float* inv_std) {
  ClusterTile ct;
  if (!plan_cluster(cols, N4, ct, kPerRow ? kClusterThreads : kLayerNormClusterThreads)) {
    return false;
  }
  bool vec = aligned16(x) && aligned16(y) && aligned16(xhat);
  if (!kPerRow) vec = vec && aligned16(gamma) && aligned16(beta);
  return launch_cluster_form<N4>(ct, vec, [&](auto n, auto v, auto kvec) {
    // The staged 16-byte path, or where the device refuses its shared memory, the plain one.
    if constexpr (kvec) {
      if (launch_cluster_with_stage<kNormClusterStage>(
              norm_fwd_cluster<kPerRow, n, v, true>, ct, rows, norm_fwd_cluster_smem<kPerRow, n>,
              s, x, gamma, beta, y, xhat, inv_std, rows, cols, eps)) {
        return true;
      }
    }
    return launch_cluster(norm_fwd_cluster<kPerRow, n, v, false>, ct, rows, s, x, gamma, beta, y,
                          xhat, inv_std, rows, cols, eps);
  });
}

template <bool kPerRow, int N4>
bool norm_bwd_clustered(cudaStream_t s, size_t rows, uint32_t cols, const float* dy,
                        const float* xhat, const float* inv_std, const float* gamma, float* dx,
                        float* dgamma, float* dbeta) {
  ClusterTile ct;
  if (!plan_cluster(cols, N4, ct)) return false;
  bool vec = aligned16(dy) && aligned16(xhat) && aligned16(dx);
  if (!kPerRow) vec = vec && aligned16(gamma);
  return launch_cluster_form<N4>(ct, vec, [&](auto n, auto v, auto kvec) {
    // The staged 16-byte path, or where the device refuses its shared memory, the plain one.
    if constexpr (kvec) {
      if (launch_cluster_with_stage<kNormClusterStage>(
              norm_bwd_cluster<kPerRow, n, v, true>, ct, rows, ClusterRowStage<2, n>::bytes, s,
              dy, xhat, inv_std, gamma, dx, dgamma, dbeta, rows, cols)) {
        return true;
      }
    }
    return launch_cluster(norm_bwd_cluster<kPerRow, n, v, false>, ct, rows, s, dy, xhat, inv_std,
                          gamma, dx, dgamma, dbeta, rows, cols);
  });
}

}  // namespace tapecheck_cuda
