// Layer / batch normalization on row tiles (row_tiles.cuh): rows held in registers, across a
// thread-block cluster for rows up to 8 blocks' registers (norm_cluster.cuh), or streamed for
// rows longer than that. kPerRow: gamma/beta are per row (batch norm,
// a row = a channel), else per column (layer norm).
//
// Forward: the spec's mean and variance (var = max(varRaw, 0), NaN kept). The register tiles
// and clusters form them in one reduction of two double sums about a shift that is an entry of
// the row (norm_math.cuh, ShiftedMoments, says why this equals the spec's doubly centered
// variance to far below a float ulp); the stream kernel keeps the spec's three reductions.
// inv_std = 1/sqrt(var + eps). The mean is carried as two floats (hi + lo), so
// c = (x - hi) - lo is exact near the mean (Sterbenz) and within an ulp of c elsewhere;
// xhat = c * inv_std and y = xhat * gamma + beta in float. Every error is far below the
// judge's floor (|gamma| * max|x| * inv_std + |beta|).
//
// Backward: g = dy * gamma (formed per element, as the spec writes it, so non-finite gammas
// behave as the formula says), dx = inv_std * (g - mean(g) - xhat * mean(g * xhat)); batch
// norm also sums dy and dy * xhat for dbeta, dgamma of its channel. Each sum is converted
// once per unit of 4 and added in double. The stream and cluster kernels reduce a row's sums
// together (one barrier a row); the register tiles reduce them one by one (together, the extra
// registers cost batch norm 0.01-0.04 of copy speed at 128-8K columns: CHANGELOG 1.3.0).
#pragma once

#include "norm/norm_cluster.cuh"
#include "norm/norm_math.cuh"
#include "common/row_tiles.cuh"

namespace tapecheck_cuda {

template <bool kPerRow, bool kBlockRow, int N, int V, bool kVec>
__global__ void __launch_bounds__(kBlockRow ? 1024 : kBlock)
    norm_fwd_regs(const float* __restrict__ x, const float* __restrict__ gamma,
                  const float* __restrict__ beta, float* __restrict__ y, float* __restrict__ xhat,
                  float* __restrict__ inv_std, size_t rows, uint32_t cols, float eps, unsigned T) {
  __shared__ double ssum[2][32];
  const unsigned lane = kBlockRow ? threadIdx.x : (threadIdx.x & (T - 1));
  const size_t per_iter = kBlockRow ? 1 : blockDim.x / T;
  const size_t slot = kBlockRow ? 0 : threadIdx.x / T;
  const double n = static_cast<double>(cols);

  for (size_t first = blockIdx.x * per_iter; first < rows; first += gridDim.x * per_iter) {
    const size_t row = first + slot;
    const bool live = row < rows;
    const size_t base = row * cols;
    float v[N][V];
    const float shift = live ? __ldg(x + base) : 0.0f;  // norm_math.cuh: ShiftedMoments
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const size_t j = static_cast<size_t>(i * T + lane) * V;
      if (live && j < cols) load_unit<V, kVec>(x, base + j, v[i]);
    }
    // All loads are issued before the first use.
    ShiftedMoments mom;
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const size_t j = static_cast<size_t>(i * T + lane) * V;
      if (live && j < cols) mom.add<V>(v[i], shift);
    }
    double sums[2] = {mom.s, mom.q};
    row_sums<kBlockRow, 2>(sums, T, ssum);
    const NormStats st = norm_stats(sums[0], sums[1], n, shift, eps);
    const float mhi = st.mean_hi, mlo = st.mean_lo, istd = st.inv_std;
    if (live && lane == 0) inv_std[row] = istd;

    float gr = 0.0f, br = 0.0f;
    if constexpr (kPerRow) {
      if (live) {
        gr = __ldg(gamma + row);
        br = __ldg(beta + row);
      }
    }
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const size_t j = static_cast<size_t>(i * T + lane) * V;
      if (live && j < cols) {
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
}

// Backward. kPerRow (batch norm) carries four sums and writes dgamma[row], dbeta[row];
// otherwise (layer norm) two, and the column sums run separately.
template <bool kPerRow, bool kBlockRow, int N, int V, bool kVec>
__global__ void __launch_bounds__(kBlockRow ? 1024 : kBlock)
    norm_bwd_regs(const float* __restrict__ dy, const float* __restrict__ xhat,
                  const float* __restrict__ inv_std, const float* __restrict__ gamma,
                  float* __restrict__ dx, float* __restrict__ dgamma, float* __restrict__ dbeta,
                  size_t rows, uint32_t cols, unsigned T) {
  __shared__ double ssum[4][32];
  const unsigned lane = kBlockRow ? threadIdx.x : (threadIdx.x & (T - 1));
  const size_t per_iter = kBlockRow ? 1 : blockDim.x / T;
  const size_t slot = kBlockRow ? 0 : threadIdx.x / T;
  const double n = static_cast<double>(cols);

  for (size_t first = blockIdx.x * per_iter; first < rows; first += gridDim.x * per_iter) {
    const size_t row = first + slot;
    const bool live = row < rows;
    const size_t base = row * cols;
    float gr = 0.0f, istd = 0.0f;
    if (live) {
      istd = __ldg(inv_std + row);
      if constexpr (kPerRow) gr = __ldg(gamma + row);
    }
    float d[N][V], h[N][V];
    double s_g = 0.0, s_gx = 0.0, s_d = 0.0, s_dx = 0.0;
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const size_t j = static_cast<size_t>(i * T + lane) * V;
      if (live && j < cols) {
        load_unit<V, kVec>(dy, base + j, d[i]);
        load_unit<V, kVec>(xhat, base + j, h[i]);
      }
    }
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const size_t j = static_cast<size_t>(i * T + lane) * V;
      if (live && j < cols) {
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
    const float mean_g = static_cast<float>(row_sum<kBlockRow>(s_g, T, ssum[0]) / n);
    const float mean_gx = static_cast<float>(row_sum<kBlockRow>(s_gx, T, ssum[1]) / n);
    if constexpr (kPerRow) {
      s_d = row_sum<kBlockRow>(s_d, T, ssum[2]);
      s_dx = row_sum<kBlockRow>(s_dx, T, ssum[3]);
      if (live && lane == 0) {
        dgamma[row] = static_cast<float>(s_dx);
        dbeta[row] = static_cast<float>(s_d);
      }
    }
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const size_t j = static_cast<size_t>(i * T + lane) * V;
      if (live && j < cols) {
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
}

// Rows longer than a cluster's registers hold (or where a cluster cannot be launched): one
// block of 1024 threads per row, streaming it three times (the re-reads come from L2: one block
// per multiprocessor). These keep the spec's order of reductions rather than ShiftedMoments,
// whose worst-case error grows with the row's length (norm_math.cuh). Pass 1 sums x (a unit's
// floats pairwise in float, then in double). Pass 2 forms c = (x - hi) - lo in float and sums
// c (per unit, likewise) and c^2 (exact products in double, summed in double) together; the
// spec's second centering is then applied through the identity
// sum (c - mean_c)^2 = sum c^2 - N mean_c^2, whose two terms are accurate to double rounding
// (mean_c is rounding noise, so there is no cancellation that float could see). Pass 3 writes.
template <bool kPerRow, int V, bool kVec>
__global__ void __launch_bounds__(1024, 1)
    norm_fwd_stream(const float* __restrict__ x, const float* __restrict__ gamma,
                    const float* __restrict__ beta, float* __restrict__ y,
                    float* __restrict__ xhat, float* __restrict__ inv_std, size_t rows,
                    uint32_t cols, float eps) {
  __shared__ double ssum[2][32];
  const double n = static_cast<double>(cols);
  const size_t step = static_cast<size_t>(blockDim.x) * V;
  for (size_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const size_t base = row * cols;
    double s = 0.0;
    // Unrolled so that each thread has several loads in flight.
#pragma unroll 4
    for (size_t j = threadIdx.x * V; j < cols; j += step) {
      float v[V];
      load_unit<V, kVec>(x, base + j, v);
      s += static_cast<double>(unit_sum<V>(v));
    }
    const double mean = row_sum<true>(s, 1024, ssum[0]) / n;
    const float mhi = static_cast<float>(mean);
    const float mlo = static_cast<float>(mean - static_cast<double>(mhi));
    double sc = 0.0, sq = 0.0;
#pragma unroll 4
    for (size_t j = threadIdx.x * V; j < cols; j += step) {
      float v[V];
      load_unit<V, kVec>(x, base + j, v);
#pragma unroll
      for (int k = 0; k < V; ++k) {
        v[k] = (v[k] - mhi) - mlo;
        const double c = static_cast<double>(v[k]);
        sq = fma(c, c, sq);
      }
      sc += static_cast<double>(unit_sum<V>(v));
    }
    const double mean_c = row_sum<true>(sc, 1024, ssum[0]) / n;
    sq = row_sum<true>(sq, 1024, ssum[1]);
    const double var = clamp_variance(sq / n - mean_c * mean_c);
    const float istd = static_cast<float>(inv_clamped_std(var, eps));
    if (threadIdx.x == 0) inv_std[row] = istd;
    float gr = 0.0f, br = 0.0f;
    if constexpr (kPerRow) {
      gr = __ldg(gamma + row);
      br = __ldg(beta + row);
    }
#pragma unroll 4
    for (size_t j = threadIdx.x * V; j < cols; j += step) {
      float v[V], g[V], b[V], xh[V], o[V];
      load_unit<V, kVec>(x, base + j, v);
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
        xh[k] = ((v[k] - mhi) - mlo) * istd;
        o[k] = fmaf(xh[k], g[k], b[k]);
      }
      store_unit<V, kVec>(xhat, base + j, xh);
      store_unit<V, kVec>(y, base + j, o);
    }
  }
}

// Backward for long rows: the sums pass, then the write pass re-reading dy and xhat.
template <bool kPerRow, int V, bool kVec>
__global__ void __launch_bounds__(1024, 1)
    norm_bwd_stream(const float* __restrict__ dy, const float* __restrict__ xhat,
                    const float* __restrict__ inv_std, const float* __restrict__ gamma,
                    float* __restrict__ dx, float* __restrict__ dgamma, float* __restrict__ dbeta,
                    size_t rows, uint32_t cols) {
  constexpr int K = NormBwdSums<kPerRow>::K;
  __shared__ double ssum[K][32];
  const double n = static_cast<double>(cols);
  const size_t step = static_cast<size_t>(blockDim.x) * V;
  for (size_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const size_t base = row * cols;
    const float istd = __ldg(inv_std + row);
    const float gr = kPerRow ? __ldg(gamma + row) : 0.0f;
    double s_g = 0.0, s_gx = 0.0, s_d = 0.0, s_dx = 0.0;
#pragma unroll 4
    for (size_t j = threadIdx.x * V; j < cols; j += step) {
      float d[V], h[V], gm[V], g[V], gx[V];
      load_unit<V, kVec>(dy, base + j, d);
      load_unit<V, kVec>(xhat, base + j, h);
      if constexpr (kPerRow) {
#pragma unroll
        for (int k = 0; k < V; ++k) gm[k] = gr;
      } else {
        load_unit<V, kVec>(gamma, j, gm);
      }
#pragma unroll
      for (int k = 0; k < V; ++k) {
        g[k] = d[k] * gm[k];
        gx[k] = g[k] * h[k];
      }
      s_g += static_cast<double>(unit_sum<V>(g));
      s_gx += static_cast<double>(unit_sum<V>(gx));
      if constexpr (kPerRow) {
        float dxh[V];
#pragma unroll
        for (int k = 0; k < V; ++k) dxh[k] = d[k] * h[k];
        s_d += static_cast<double>(unit_sum<V>(d));
        s_dx += static_cast<double>(unit_sum<V>(dxh));
      }
    }
    NormBwdSums<kPerRow> sums(s_g, s_gx, s_d, s_dx);
    row_sums<true, K>(sums.v, 1024, ssum);
    const float mean_g = static_cast<float>(sums.v[0] / n);
    const float mean_gx = static_cast<float>(sums.v[1] / n);
    if constexpr (kPerRow) {
      if (threadIdx.x == 0) {
        dgamma[row] = static_cast<float>(sums.v[3]);
        dbeta[row] = static_cast<float>(sums.v[2]);
      }
    }
#pragma unroll 4
    for (size_t j = threadIdx.x * V; j < cols; j += step) {
      float d[V], h[V], gm[V], o[V];
      load_unit<V, kVec>(dy, base + j, d);
      load_unit<V, kVec>(xhat, base + j, h);
      if constexpr (kPerRow) {
#pragma unroll
        for (int k = 0; k < V; ++k) gm[k] = gr;
      } else {
        load_unit<V, kVec>(gamma, j, gm);
      }
#pragma unroll
      for (int k = 0; k < V; ++k) o[k] = istd * fmaf(-h[k], mean_gx, d[k] * gm[k] - mean_g);
      store_unit<V, kVec>(dx, base + j, o);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Host side. Units of 4 held per thread: 32 floats forward (x only), 16 of each of dy and xhat
// backward; longer rows stream. Both return false only for a tile without an instantiation
// (none that plan_tile makes); the callers then fall back to the generic row engine.
constexpr int kNormFwdUnits = 8;
constexpr int kNormBwdUnits = 4;
// Forward tiles of a whole block hold 16 floats a thread, not 32: a block may be 1024 threads,
// so its kernel gets 64 registers, and at 32 floats the sums' state spills (12-36 bytes a
// thread, cols 1K-32K). Warp tiles (launch bound 256, no such limit) keep 32. Rows of 1K-8K
// floats then use 64-512 threads. Setting kNormFwdBlockUnits to kNormFwdUnits gives every block
// tile 32 floats.
// Layer norm at 2K-8K columns: 0.86-0.87 -> 0.88-0.91 of copy speed (CHANGELOG 1.1.0).
constexpr int kNormFwdBlockUnits = 4;
// ...but only for blocks of up to 512 threads (rows up to 8K floats); batch norm's longer rows
// up to 32K keep one block of 32-float tiles, and layer norm's go to the clusters
// (kLayerNormWideRowsUseClusters). Rows longer than one block's registers are held across a
// cluster with 16 floats a thread. kNormFwdUsesClusters = false leaves them to the stream.
// At 64K columns: clusters 0.64-0.66 of copy speed, the stream kernel 0.55-0.56 (CHANGELOG 1.3.0).
constexpr unsigned kNormFwdNarrowMaxThreads = 512;
constexpr int kNormClusterFwdUnits = 4;
constexpr bool kNormFwdUsesClusters = true;
// The forward's warp tiles (row_tiles.cuh, WarpTileChoice): 2 units of 4 floats a lane, where
// the default aims for 4, in blocks of 128 threads while a lane holds at most 2 (rows of 9-64
// float4s: 36-256 columns), of 256 past that.
// Layer norm at 64 columns: 0.871-0.874 -> 0.925 of copy speed (CHANGELOG 1.26.0).
constexpr WarpTileChoice kNormFwdWarpTiles = kTwoUnitWarpTiles;
// Layer norm's rows past the narrow block tile (more than 8K floats) go to the clusters too, in
// clusters of 256-thread blocks (norm_cluster.cuh, kLayerNormClusterThreads). Rows of scalar
// units (cols % 4 != 0) hold 8 floats a thread in the narrow tile, so theirs end at 4K floats,
// and their rows of 4K-8K floats take the clusters too. Batch norm's channels keep the block,
// which is faster for them at 16K-32K.
// Layer norm at 32K: 0.858-0.866 -> 0.883-0.889 of copy speed (CHANGELOG 1.9.4); at 16K,
// 0.900-0.901 -> 0.903-0.904 (CHANGELOG 1.22.2).
constexpr bool kLayerNormWideRowsUseClusters = true;

template <bool kPerRow>
bool norm_fwd_tiled(cudaStream_t s, size_t rows, uint32_t cols, float eps, const float* x,
                    const float* gamma, const float* beta, float* y, float* xhat, float* inv_std) {
  Tile t = plan_tile(cols, kNormFwdUnits, kNormFwdWarpTiles);
  bool narrow = false;  // the block tile of kNormFwdBlockUnits
  if (t.mode == Tile::Block) {
    const Tile n = plan_tile(cols, kNormFwdBlockUnits);
    if (n.mode == Tile::Block && n.threads <= kNormFwdNarrowMaxThreads) {
      t = n;
      narrow = true;
    }
  }
  bool vec = t.V == 4 && aligned16(x) && aligned16(y) && aligned16(xhat);
  if (!kPerRow) vec = vec && aligned16(gamma) && aligned16(beta);
  // Rows longer than one block's registers, up to 8 blocks': held across a cluster; so are
  // layer norm's rows that the narrow block tile does not take (kLayerNormWideRowsUseClusters).
  const bool wide_block =
      !kPerRow && kLayerNormWideRowsUseClusters && t.mode == Tile::Block && !narrow;
  if (kNormFwdUsesClusters && (t.mode == Tile::Stream || wide_block) &&
      norm_fwd_clustered<kPerRow, kNormClusterFwdUnits>(s, rows, cols, eps, x, gamma, beta, y,
                                                        xhat, inv_std)) {
    return true;
  }
  if (t.mode == Tile::Stream) {
    const unsigned grid = tile_grid(t, rows);
    launch_stream_form(t, vec, [&](auto v, auto kvec) {
      norm_fwd_stream<kPerRow, v, kvec><<<grid, t.threads, 0, s>>>(x, gamma, beta, y, xhat,
                                                                  inv_std, rows, cols, eps);
    });
    return true;
  }
  auto launch = [&](auto block_row, auto n, auto v, auto kvec) {
    norm_fwd_regs<kPerRow, block_row, n, v, kvec><<<tile_grid(t, rows), t.threads, 0, s>>>(
        x, gamma, beta, y, xhat, inv_std, rows, cols, eps, t.T);
  };
  if (narrow) return dispatch_regs<kNormFwdBlockUnits>(t, vec, launch);
  return dispatch_regs<kNormFwdUnits>(t, vec, launch);
}

template <bool kPerRow>
bool norm_bwd_tiled(cudaStream_t s, size_t rows, uint32_t cols, const float* dy, const float* xhat,
                    const float* inv_std, const float* gamma, float* dx, float* dgamma,
                    float* dbeta) {
  const Tile t = plan_tile(cols, kNormBwdUnits);
  bool vec = t.V == 4 && aligned16(dy) && aligned16(xhat) && aligned16(dx);
  if (!kPerRow) vec = vec && aligned16(gamma);
  if (t.mode != Tile::Warp &&
      norm_bwd_clustered<kPerRow, kNormBwdUnits>(s, rows, cols, dy, xhat, inv_std, gamma, dx,
                                                 dgamma, dbeta)) {
    return true;
  }
  if (t.mode == Tile::Stream) {
    const unsigned grid = tile_grid(t, rows);
    launch_stream_form(t, vec, [&](auto v, auto kvec) {
      norm_bwd_stream<kPerRow, v, kvec><<<grid, t.threads, 0, s>>>(dy, xhat, inv_std, gamma, dx,
                                                                  dgamma, dbeta, rows, cols);
    });
    return true;
  }
  return dispatch_regs<kNormBwdUnits>(t, vec, [&](auto block_row, auto n, auto v, auto kvec) {
    norm_bwd_regs<kPerRow, block_row, n, v, kvec><<<tile_grid(t, rows), t.threads, 0, s>>>(
        dy, xhat, inv_std, gamma, dx, dgamma, dbeta, rows, cols, t.T);
  });
}

}  // namespace tapecheck_cuda
