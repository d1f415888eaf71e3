// crossEntropy on row tiles (row_tiles.cuh) for the common layout inner == 1 (each slice is a
// contiguous row of n logits). Rows too long for the register tiles, and strided slices, stay
// on the generic row engine.
//
// Forward: logp = (x - m) - log(sum exp(x - m)) as softmax_fwd.cuh computes it, and each thread
// adds t * logp over its elements (float products per unit, pairwise, then double) across all
// its rows; a block adds its threads in a fixed order into one partial per block, and the
// caller's finishing kernel adds the partials in block order. The grid depends only on the
// shape, so the loss is repeatable bit for bit. IEEE products are kept literally: a zero weight
// on a -inf log-probability gives NaN, as the spec's formula does.
//
// Backward: W = sum t per row (float per unit, double across), then
// dlogits = scale * (exp(logp) * W - t), dtarget = -scale * logp, scale = dloss / denom.
#pragma once

#include "common/row_tiles.cuh"
#include "softmax/softmax_math.cuh"

namespace tapecheck_cuda {

template <bool kBlockRow, int N, int V, bool kVec>
__global__ void __launch_bounds__(kBlockRow ? 1024 : kBlock)
    ce_fwd_regs(const float* __restrict__ x, const float* __restrict__ target,
                float* __restrict__ logp, double* __restrict__ partial, size_t rows,
                uint32_t cols, unsigned T) {
  __shared__ float smax[32];
  __shared__ double ssum[32];
  const unsigned lane = kBlockRow ? threadIdx.x : (threadIdx.x & (T - 1));
  const size_t per_iter = kBlockRow ? 1 : blockDim.x / T;
  const size_t slot = kBlockRow ? 0 : threadIdx.x / T;
  double loss = 0.0;

  for (size_t first = blockIdx.x * per_iter; first < rows; first += gridDim.x * per_iter) {
    const size_t row = first + slot;
    const bool live = row < rows;
    const size_t base = row * cols;
    float v[N][V], t[N][V];
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const size_t j = static_cast<size_t>(i * T + lane) * V;
      if (live && j < cols) {
        load_unit<V, kVec, Reads::Once>(x, base + j, v[i]);
        load_unit<V, kVec, Reads::Once>(target, base + j, t[i]);
      }
    }
    float m = -CUDART_INF_F;
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const size_t j = static_cast<size_t>(i * T + lane) * V;
      if (live && j < cols) {
#pragma unroll
        for (int k = 0; k < V; ++k) m = fmax_nan(m, v[i][k]);
      }
    }
    m = row_max<kBlockRow>(m, T, smax) + 0.0f;  // + 0: a zero maximum is +0 whichever met first
    const bool bad = !isfinite(m);
    double s = 0.0;
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const size_t j = static_cast<size_t>(i * T + lane) * V;
      if (live && j < cols && !bad) {
        float e[V];
#pragma unroll
        for (int k = 0; k < V; ++k) e[k] = exp_of_diff(v[i][k], m);
        s += static_cast<double>(unit_sum<V>(e));
      }
    }
    const float ls = static_cast<float>(log(row_sum<kBlockRow>(s, T, ssum)));
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const size_t j = static_cast<size_t>(i * T + lane) * V;
      if (live && j < cols) {
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
  loss = row_sum<true>(loss, blockDim.x, ssum);
  if (threadIdx.x == 0) partial[blockIdx.x] = loss;
}

template <bool kBlockRow, int N, int V, bool kVec>
__global__ void __launch_bounds__(kBlockRow ? 1024 : kBlock)
    ce_bwd_regs(const float* __restrict__ dloss, const float* __restrict__ logp,
                const float* __restrict__ target, float* __restrict__ dlogits,
                float* __restrict__ dtarget, size_t rows, uint32_t cols, unsigned T, double denom) {
  __shared__ double ssum[32];
  const unsigned lane = kBlockRow ? threadIdx.x : (threadIdx.x & (T - 1));
  const size_t per_iter = kBlockRow ? 1 : blockDim.x / T;
  const size_t slot = kBlockRow ? 0 : threadIdx.x / T;
  const float scale = static_cast<float>(static_cast<double>(__ldg(dloss)) / denom);

  for (size_t first = blockIdx.x * per_iter; first < rows; first += gridDim.x * per_iter) {
    const size_t row = first + slot;
    const bool live = row < rows;
    const size_t base = row * cols;
    float lp[N][V], t[N][V];
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const size_t j = static_cast<size_t>(i * T + lane) * V;
      if (live && j < cols) {
        load_unit<V, kVec, Reads::Once>(logp, base + j, lp[i]);
        load_unit<V, kVec, Reads::Once>(target, base + j, t[i]);
      }
    }
    double w = 0.0;
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const size_t j = static_cast<size_t>(i * T + lane) * V;
      if (live && j < cols) w += static_cast<double>(unit_sum<V>(t[i]));
    }
    const float wf = static_cast<float>(row_sum<kBlockRow>(w, T, ssum));
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const size_t j = static_cast<size_t>(i * T + lane) * V;
      if (live && j < cols) {
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
}

// ---------------------------------------------------------------------------------------------
// Host side. Two arrays per element: 16 of each per thread.
constexpr int kCeUnits = 4;

// The backward's warp tiles (row_tiles.cuh, WarpTileChoice): 2 units of 4 floats a lane, where
// the default aims for 4, in blocks of 128 threads while a lane holds at most 2 (slices of 36-256
// floats), of 256 past that. The forward keeps the default, which is faster for it (its loss
// takes a partial a block, so its blocks are also its loss's partials).
// Backward at n = 64: 0.898-0.900 -> 0.976-0.977 of copy speed (CHANGELOG 1.26.0).
constexpr WarpTileChoice kCeBwdWarpTiles = kTwoUnitWarpTiles;

// The tile for contiguous slices of n, or Stream when the engine must take them.
inline Tile ce_tile(uint32_t n, uint32_t inner, const WarpTileChoice& w = kDefaultWarpTiles) {
  Tile t = plan_tile(n, kCeUnits, w);
  if (inner != 1) t.mode = Tile::Stream;
  return t;
}

}  // namespace tapecheck_cuda
