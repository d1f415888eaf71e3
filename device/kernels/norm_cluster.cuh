// Layer / batch normalization for rows held across a cluster (row_cluster.cuh): the
// arithmetic of norm_fwd_regs / norm_bwd_regs (norm_tiles.cuh, which launches these), unit
// for unit, with the row's threads spread over C blocks, so x (forward) or dy and xhat
// (backward) are read from HBM once instead of twice by the stream kernels. A row's sums are
// reduced together, with one cluster barrier (row_cluster.cuh, cluster_sums).
#pragma once

#include "norm_math.cuh"
#include "row_stage.cuh"

namespace tapecheck_cuda {

// Row scalars (a norm's shift, a channel's gamma and beta, an inverse std) are read one row
// ahead: with stages the row's units are already in shared memory, and a global load issued at
// the row's start would put its whole latency on the row.
__device__ __forceinline__ float next_row_scalar(const float* p, size_t next, size_t rows,
                                                 size_t stride) {
  return next < rows ? __ldg(p + next * stride) : 0.0f;
}

// S: stages of row_stage.cuh (0: loads from global memory).
template <bool kPerRow, int N, int V, bool kVec, int S>
__global__ void __launch_bounds__(1024, 1)
    norm_fwd_cluster(const float* __restrict__ x, const float* __restrict__ gamma,
                     const float* __restrict__ beta, float* __restrict__ y,
                     float* __restrict__ xhat, float* __restrict__ inv_std, size_t rows,
                     uint32_t cols, float eps) {
  __shared__ double wsum[2][32];
  __shared__ double slot[2][2];  // alternating by row: one cluster barrier a row
  __shared__ uint64_t full[S > 0 ? S : 1];
  cg::cluster_group cl = cg::this_cluster();
  const unsigned C = cl.num_blocks();
  const unsigned RT = C * blockDim.x;
  const unsigned lane = cl.block_rank() * blockDim.x + threadIdx.x;
  const size_t clusters = gridDim.x / C;
  const double n = static_cast<double>(cols);
  unsigned parity = 0, r = 0;
  auto src = make_rows<S, 1, V, kVec, kPrefetchForward>({x}, rows, cols, N, full);
  src.start(blockIdx.x / C);
  float next_shift = next_row_scalar(x, blockIdx.x / C, rows, cols);
  float next_gr = kPerRow ? next_row_scalar(gamma, blockIdx.x / C, rows, 1) : 0.0f;
  float next_br = kPerRow ? next_row_scalar(beta, blockIdx.x / C, rows, 1) : 0.0f;

  for (size_t row = blockIdx.x / C; row < rows; row += clusters, parity ^= 1u, ++r) {
    const size_t base = row * cols;
    const float shift = next_shift;  // norm_math.cuh: ShiftedMoments
    const float gr = next_gr, br = next_br;
    next_shift = next_row_scalar(x, row + clusters, rows, cols);
    if constexpr (kPerRow) {
      next_gr = next_row_scalar(gamma, row + clusters, rows, 1);
      next_br = next_row_scalar(beta, row + clusters, rows, 1);
    }
    float v[N][V];
    src.wait(r);
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const size_t j = static_cast<size_t>(i * RT + lane) * V;
      if (j < cols) src.load(0, base, j, i, r, v[i]);
    }
    src.loaded(row);
    ShiftedMoments mom;
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const size_t j = static_cast<size_t>(i * RT + lane) * V;
      if (j < cols) mom.add<V>(v[i], shift);
    }
    double sums[2] = {mom.s, mom.q};
    cluster_sums<2>(sums, wsum, slot[parity]);
    src.release(row, r);  // after the block barrier of cluster_sums
    const NormStats st = norm_stats(sums[0], sums[1], n, shift, eps);
    const float mhi = st.mean_hi, mlo = st.mean_lo, istd = st.inv_std;
    if (lane == 0) inv_std[row] = istd;

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
  cl.sync();  // the other blocks may still read this block's slots
}

// kPerRow (batch norm) carries four sums and writes dgamma[row], dbeta[row]; otherwise (layer
// norm) two, and the caller runs the column sums.
template <bool kPerRow, int N, int V, bool kVec, int S>
__global__ void __launch_bounds__(1024, 1)
    norm_bwd_cluster(const float* __restrict__ dy, const float* __restrict__ xhat,
                     const float* __restrict__ inv_std, const float* __restrict__ gamma,
                     float* __restrict__ dx, float* __restrict__ dgamma, float* __restrict__ dbeta,
                     size_t rows, uint32_t cols) {
  constexpr int K = NormBwdSums<kPerRow>::K;  // reduced together: one cluster barrier a row
  __shared__ double wsum[K][32];
  __shared__ double slot[2][K];  // alternating by row
  __shared__ uint64_t full[S > 0 ? S : 1];
  cg::cluster_group cl = cg::this_cluster();
  const unsigned C = cl.num_blocks();
  const unsigned RT = C * blockDim.x;
  const unsigned lane = cl.block_rank() * blockDim.x + threadIdx.x;
  const size_t clusters = gridDim.x / C;
  const double n = static_cast<double>(cols);
  unsigned parity = 0, r = 0;
  auto src = make_rows<S, 2, V, kVec, kPrefetchBackward>({dy, xhat}, rows, cols, N, full);
  src.start(blockIdx.x / C);
  float next_istd = next_row_scalar(inv_std, blockIdx.x / C, rows, 1);
  float next_gr = kPerRow ? next_row_scalar(gamma, blockIdx.x / C, rows, 1) : 0.0f;

  for (size_t row = blockIdx.x / C; row < rows; row += clusters, parity ^= 1u, ++r) {
    const size_t base = row * cols;
    const float istd = next_istd, gr = next_gr;
    next_istd = next_row_scalar(inv_std, row + clusters, rows, 1);
    if constexpr (kPerRow) next_gr = next_row_scalar(gamma, row + clusters, rows, 1);
    float d[N][V], h[N][V];
    double s_g = 0.0, s_gx = 0.0, s_d = 0.0, s_dx = 0.0;
    src.wait(r);
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const size_t j = static_cast<size_t>(i * RT + lane) * V;
      if (j < cols) {
        src.load(0, base, j, i, r, d[i]);
        src.load(1, base, j, i, r, h[i]);
      }
    }
    src.loaded(row);
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
    cluster_sums<K>(sums.v, wsum, slot[parity]);
    src.release(row, r);  // after the block barrier of cluster_sums
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
  cl.sync();
}

// Stages (row_stage.cuh) of the 16-byte path; 0: global loads.
constexpr int kNormFwdStages = 3;
constexpr int kNormBwdStages = 1;

// Host side: true when launched; false leaves the row to the stream kernels. N4: the units of
// 4 a thread holds (norm_tiles.cuh's kNormClusterFwdUnits / kNormBwdUnits).
template <bool kPerRow, int N4>
bool norm_fwd_clustered(cudaStream_t s, size_t rows, uint32_t cols, float eps, const float* x,
                        const float* gamma, const float* beta, float* y, float* xhat,
                        float* inv_std) {
  ClusterTile ct;
  if (!plan_cluster(cols, N4, ct)) return false;
  if (ct.V == 4) {
    bool vec = aligned16(x) && aligned16(y) && aligned16(xhat);
    if (!kPerRow) vec = vec && aligned16(gamma) && aligned16(beta);
    if (vec) {
      if (launch_staged<kNormFwdStages, 1, N4>(norm_fwd_cluster<kPerRow, N4, 4, true, kNormFwdStages>,
                                               ct, rows, s, x, gamma, beta, y, xhat, inv_std, rows,
                                               cols, eps)) {
        return true;
      }
      return launch_cluster(norm_fwd_cluster<kPerRow, N4, 4, true, 0>, ct, rows, s, x, gamma, beta,
                            y, xhat, inv_std, rows, cols, eps);
    }
    return launch_cluster(norm_fwd_cluster<kPerRow, N4, 4, false, 0>, ct, rows, s, x, gamma, beta,
                          y, xhat, inv_std, rows, cols, eps);
  }
  return launch_cluster(norm_fwd_cluster<kPerRow, 2 * N4, 1, false, 0>, ct, rows, s, x, gamma,
                        beta, y, xhat, inv_std, rows, cols, eps);
}

template <bool kPerRow, int N4>
bool norm_bwd_clustered(cudaStream_t s, size_t rows, uint32_t cols, const float* dy,
                        const float* xhat, const float* inv_std, const float* gamma, float* dx,
                        float* dgamma, float* dbeta) {
  ClusterTile ct;
  if (!plan_cluster(cols, N4, ct)) return false;
  if (ct.V == 4) {
    bool vec = aligned16(dy) && aligned16(xhat) && aligned16(dx);
    if (!kPerRow) vec = vec && aligned16(gamma);
    if (vec) {
      if (launch_staged<kNormBwdStages, 2, N4>(norm_bwd_cluster<kPerRow, N4, 4, true, kNormBwdStages>,
                                               ct, rows, s, dy, xhat, inv_std, gamma, dx, dgamma,
                                               dbeta, rows, cols)) {
        return true;
      }
      return launch_cluster(norm_bwd_cluster<kPerRow, N4, 4, true, 0>, ct, rows, s, dy, xhat,
                            inv_std, gamma, dx, dgamma, dbeta, rows, cols);
    }
    return launch_cluster(norm_bwd_cluster<kPerRow, N4, 4, false, 0>, ct, rows, s, dy, xhat,
                          inv_std, gamma, dx, dgamma, dbeta, rows, cols);
  }
  return launch_cluster(norm_bwd_cluster<kPerRow, 2 * N4, 1, false, 0>, ct, rows, s, dy, xhat,
                        inv_std, gamma, dx, dgamma, dbeta, rows, cols);
}

}  // namespace tapecheck_cuda
