// layer_norm backward with dgamma/dbeta fused into the row pass: dy and xhat are read from HBM
// once (the separate column-sum kernel re-reads both, a third more traffic).
//
// dx is computed as norm_bwd_regs (norm_tiles.cuh) computes it, on this file's own tile
// (plan_ln_fused_tile, at most 8 floats a thread), chosen from cols alone: a row's dx still
// depends only on its data and cols (its sums are grouped differently from norm_bwd_regs'
// tile, so the last bits may differ from what the separate passes give).
//
// dgamma[j] = sum_r dy*xhat, dbeta[j] = sum_r dy. Each thread holds the same columns in every
// row it visits (the tile is fixed for the launch), so it keeps a double accumulator per sum
// and column it holds, in shared memory (ln_colsum_batch.cuh: block rows add their rows'
// terms in float batches first, warp tiles add each row's exact products).
//
// Determinism: block b visits row iterations b, b + G, b + 2G, ... in order, G fixed from
// (rows, cols) alone (plan_ln_fused_grid); at its end it adds the accumulators of the threads
// that hold a column (the row slots of a warp tile) in slot order and writes one partial row
// [b][cols]; ln_colsum_finish adds the G partials of a column in a fixed tree. No atomics.
#pragma once

#include "norm/ln_colsum_batch.cuh"
#include "norm/norm_tiles.cuh"

namespace tapecheck_cuda {

// The fused tile holds at most 2 units of 4 (or 4 floats) of each of dy and xhat a thread,
// half of norm_bwd_regs' 4: the doubles of 8 columns x 2 sums x 1024 threads are 128 KiB of
// shared memory, one such block (or several smaller ones) per multiprocessor. Rows longer
// than 1024 threads x 8 floats (cols > 8192; > 4096 when cols % 4 != 0) go to the clusters
// (ln_bwd_cluster.cuh) or keep the separate column kernel; rows of 4097-8192 columns of 16-byte
// units go to the clusters first (kLnShortClusterBlocks there).
constexpr int kLnFusedUnits = 2;
// false: layer_norm_bwd always runs the row kernel, then the separate column sums (as it does
// for rows past the fused tile).
constexpr bool kUseLnFused = true;
// Block rows of at least this many columns prefetch their next row into L2 (row_tiles.cuh,
// prefetch_rows); warp tiles never do (they lose 0.25-0.27 of copy speed with it).
// 2K columns: 0.879-0.895 of copy speed with the prefetch, 0.919-0.924 without (CHANGELOG 1.9.6).
constexpr uint32_t kLnFusedPrefetchMinCols = 4096;

// Rows a batch of the column sums (ln_colsum_batch.cuh), from the tile.
inline unsigned ln_fused_batch_rows(const Tile& t) {
  return t.threads >= 1024 ? kLnBatchRowsWide : kLnBatchRowsNarrow;
}

// The two steps of a row that ln_bwd_fused and ln_bwd_cluster share, on one unit of V columns
// (gm: its gamma, d: its dy, h: its xhat), with g = dy * gamma.
// First, the unit's terms of the row's sums: sums[0] += sum g, sums[1] += sum g * xhat.
template <int V>
__device__ __forceinline__ void add_ln_bwd_sums(const float (&gm)[V], const float (&d)[V],
                                                const float (&h)[V], double (&sums)[2]) {
  float g[V], gx[V];
#pragma unroll
  for (int k = 0; k < V; ++k) {
    g[k] = d[k] * gm[k];
    gx[k] = g[k] * h[k];
  }
  sums[0] += static_cast<double>(unit_sum<V>(g));
  sums[1] += static_cast<double>(unit_sum<V>(gx));
}

// Then, once the row's means are known, the unit's dx = istd * (g - mean_g - xhat * mean_gx).
template <int V>
__device__ __forceinline__ void ln_bwd_dx(const float (&gm)[V], const float (&d)[V],
                                          const float (&h)[V], float istd, float mean_g,
                                          float mean_gx, float (&o)[V]) {
#pragma unroll
  for (int k = 0; k < V; ++k) {
    const float g = d[k] * gm[k];
    o[k] = istd * fmaf(-h[k], mean_gx, g - mean_g);
  }
}

// The same two steps with the unit's gamma read from global memory at column j.
template <int V, bool kVec>
__device__ __forceinline__ void add_ln_bwd_unit_sums(const float* __restrict__ gamma, size_t j,
                                                     const float (&d)[V], const float (&h)[V],
                                                     double (&sums)[2]) {
  float gm[V];
  load_unit<V, kVec>(gamma, j, gm);
  add_ln_bwd_sums<V>(gm, d, h, sums);
}

template <int V, bool kVec>
__device__ __forceinline__ void store_ln_bwd_unit(const float* __restrict__ gamma, size_t j,
                                                  const float (&d)[V], const float (&h)[V],
                                                  float istd, float mean_g, float mean_gx,
                                                  float* __restrict__ dx, size_t at) {
  float gm[V], o[V];
  load_unit<V, kVec>(gamma, j, gm);
  ln_bwd_dx<V>(gm, d, h, istd, mean_g, mean_gx, o);
  store_unit<V, kVec>(dx, at, o);
}

// Every variant is held to 64 registers (1024 resident threads a multiprocessor) so that one
// wave is a known number of blocks (plan_ln_fused_grid). A row's two sums reduce together
// (row_sums: one barrier pair, not two).
template <bool kBlockRow, int N, int V, bool kVec>
__global__ void __launch_bounds__(kBlockRow ? 1024 : kBlock, kBlockRow ? 1 : 1024 / kBlock)
    ln_bwd_fused(const float* __restrict__ dy, const float* __restrict__ xhat,
                 const float* __restrict__ inv_std, const float* __restrict__ gamma,
                 float* __restrict__ dx, double2* __restrict__ partial, size_t rows,
                 uint32_t cols, unsigned T, unsigned batch_rows) {
  __shared__ double ssum[2][32];
  extern __shared__ double acc[];  // [2][N][V][blockDim.x]
  const unsigned threads = blockDim.x;
  const unsigned lane = kBlockRow ? threadIdx.x : (threadIdx.x & (T - 1));
  const size_t per_iter = kBlockRow ? 1 : threads / T;
  const size_t slot = kBlockRow ? 0 : threadIdx.x / T;
  const double n = static_cast<double>(cols);
  ColumnSums<N, V, kBlockRow> colsums;
  colsums.start(acc, batch_rows);

  for (size_t first = blockIdx.x * per_iter; first < rows; first += gridDim.x * per_iter) {
    const size_t row = first + slot;
    const bool live = row < rows;
    const float istd = live ? __ldg(inv_std + row) : 0.0f;
    float d[N][V], h[N][V];
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const size_t j = static_cast<size_t>(i * T + lane) * V;
      if (live && j < cols) {
        load_unit<V, kVec>(dy, row * cols + j, d[i]);
        load_unit<V, kVec>(xhat, row * cols + j, h[i]);
      }
    }
    const size_t next = first + gridDim.x * per_iter;  // this block's next rows
    if (cols >= kLnFusedPrefetchMinCols) {
      prefetch_rows<kVec && kBlockRow>(dy, next, per_iter, rows, cols);
      prefetch_rows<kVec && kBlockRow>(xhat, next, per_iter, rows, cols);
    }
    double sums[2] = {0.0, 0.0};  // sum g, sum g * xhat
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const size_t j = static_cast<size_t>(i * T + lane) * V;
      if (live && j < cols) {
        add_ln_bwd_unit_sums<V, kVec>(gamma, j, d[i], h[i], sums);
        colsums.add(i, d[i], h[i]);
      }
    }
    colsums.row_done(batch_rows);
    row_sums<kBlockRow, 2>(sums, T, ssum);
    const size_t base = row * cols;
    const float mean_g = static_cast<float>(sums[0] / n);
    const float mean_gx = static_cast<float>(sums[1] / n);
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const size_t j = static_cast<size_t>(i * T + lane) * V;
      if (live && j < cols) store_ln_bwd_unit<V, kVec>(gamma, j, d[i], h[i], istd, mean_g, mean_gx, dx, base + j);
    }
  }
  colsums.flush();

  // The block's partial row: column c is component k of unit u = c / V, held by lane u % T
  // as its unit u / T, in each of the row slots of a warp tile (added in slot order).
  const size_t slots = kBlockRow ? 1 : threads / T;
  __syncthreads();
  for (uint32_t c = threadIdx.x; c < cols; c += threads) {
    const unsigned u = c / V, k = c % V;
    const unsigned i = u / T, l = u % T;
    double sx = 0.0, s = 0.0;
    for (size_t q = 0; q < slots; ++q) {
      const size_t t = q * T + l;
      sx += acc[((0u * N + i) * V + k) * threads + t];
      s += acc[((1u * N + i) * V + k) * threads + t];
    }
    partial[static_cast<size_t>(blockIdx.x) * cols + c] = make_double2(sx, s);
  }
}

// dgamma[j], dbeta[j] from the G partial rows. A block is C columns x (256 / C) lanes
// (ln_finish_columns); lane y adds the partials y, y + L, ... in order, then the lanes are
// added in order.
__global__ void __launch_bounds__(kBlock)
    ln_colsum_finish(const double2* __restrict__ partial, size_t G, uint32_t cols, unsigned C,
                     float* __restrict__ dgamma, float* __restrict__ dbeta) {
  __shared__ double2 lanes[kBlock];
  const unsigned L = kBlock / C;
  const unsigned tx = threadIdx.x % C, ty = threadIdx.x / C;
  const size_t j = static_cast<size_t>(blockIdx.x) * C + tx;
  double sx = 0.0, s = 0.0;
  if (j < cols) {
#pragma unroll 4
    for (size_t b = ty; b < G; b += L) {
      const double2 p = partial[b * cols + j];
      sx += p.x;
      s += p.y;
    }
  }
  lanes[threadIdx.x] = make_double2(sx, s);
  __syncthreads();
  if (ty == 0 && j < cols) {
    for (unsigned y = 1; y < L; ++y) {
      sx += lanes[y * C + tx].x;
      s += lanes[y * C + tx].y;
    }
    dgamma[j] = static_cast<float>(sx);
    dbeta[j] = static_cast<float>(s);
  }
}

// The finish's columns a block, C: a power of two up to 32, as large as keeps at least
// kFinishMinBlocks blocks, so that narrow rows' partials are added by many multiprocessors
// rather than a few (from cols alone: the order of the sums stays a function of the shape). With
// 32 columns a block, 512 columns would be 16 blocks, each lane adding 264 partials in a row.
// layer_norm_bwd at 512 columns: 0.83 -> 0.91 of copy speed (CHANGELOG 1.9.1).
constexpr size_t kFinishMinBlocks = 264;  // two a multiprocessor of an H200

inline unsigned ln_finish_columns(uint32_t cols) {
  unsigned c = 32;
  while (c > 1 && ceil_div(cols, c) < kFinishMinBlocks) c >>= 1;
  return c;
}

inline void launch_ln_colsum_finish(cudaStream_t s, const double2* partial, size_t G, uint32_t cols,
                                    float* dgamma, float* dbeta) {
  const unsigned C = ln_finish_columns(cols);
  ln_colsum_finish<<<static_cast<unsigned>(ceil_div(cols, C)), kBlock, 0, s>>>(partial, G, cols, C,
                                                                              dgamma, dbeta);
}

// ---------------------------------------------------------------------------------------------
// Host side.
//
// G, the number of blocks, from (rows, cols) only: kAssumedSMs (common.cuh), each holding 1024
// threads of these kernels, so G = one wave of blocks on an H200 (every block's share of rows
// then differs by at most one iteration), and the partials are G x cols doubles pairs: about
// 132 x 16K x 16 bytes = 35 MB at most, ~1% of the traffic, written last and so still in L2 for
// the finish kernel.

// The tile, from cols only. plan_tile gives short rows 4 units a lane, more than the fused
// kernel's shared memory takes: they are spread over more lanes instead (cols 32: 4 lanes of
// 2 units).
inline Tile plan_ln_fused_tile(uint32_t cols) {
  Tile t = plan_tile(cols, kLnFusedUnits);
  if (t.mode == Tile::Warp) {
    const unsigned nmax = t.V == 4 ? kLnFusedUnits : 2 * kLnFusedUnits;
    const size_t units = ceil_div(cols, static_cast<size_t>(t.V));
    const unsigned lanes = next_pow2(static_cast<unsigned>(ceil_div(units, nmax)));
    t.T = lanes < 32 ? lanes : 32u;
    t.N = static_cast<int>(next_pow2(static_cast<unsigned>(ceil_div(units, t.T))));
  }
  return t;
}

inline size_t plan_ln_fused_grid(const Tile& t, size_t rows) {
  const size_t per_iter = t.mode == Tile::Warp ? t.threads / t.T : 1;
  const size_t iters = ceil_div(rows, per_iter);
  const size_t wave = kAssumedSMs * (1024 / t.threads);
  const size_t g = iters < wave ? iters : wave;
  return g < 1 ? 1 : g;
}

// Launches ln_bwd_fused<B, N, V, kVec> on G blocks, with the accumulators' shared memory.
// The limit on dynamic shared memory is a property of the kernel shared by every host thread, so
// it is raised to what the instantiation can need at most (1024 threads), the same value from
// every caller: raised to one launch's own need, another thread could lower it between the call
// and the launch, which then fails.
template <bool B, int N, int V, bool kVec>
void launch_ln_bwd_fused(const Tile& t, size_t G, cudaStream_t s, const float* dy,
                         const float* xhat, const float* inv_std, const float* gamma, float* dx,
                         double2* partial, size_t rows, uint32_t cols) {
  const size_t smem = sizeof(double) * 2 * N * V * t.threads;
  auto k = ln_bwd_fused<B, N, V, kVec>;
  constexpr size_t kMostSmem = sizeof(double) * 2 * N * V * 1024;
  if (kMostSmem > 48 * 1024)
    cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize,
                         static_cast<int>(kMostSmem));
  k<<<static_cast<unsigned>(G), t.threads, smem, s>>>(dy, xhat, inv_std, gamma, dx, partial, rows,
                                                     cols, t.T, ln_fused_batch_rows(t));
}

// Returns false (nothing launched) for rows the fused kernel does not take, or when the
// scratch for the partials cannot be had: the caller then runs the separate passes.
inline bool ln_bwd_fused_tiled(cudaStream_t s, Scratch& scratch, size_t rows, uint32_t cols,
                               const float* dy, const float* xhat, const float* inv_std,
                               const float* gamma, float* dx, float* dgamma, float* dbeta) {
  const Tile t = plan_ln_fused_tile(cols);
  if (!kUseLnFused || t.mode == Tile::Stream || rows == 0 || cols == 0) return false;
  const size_t G = plan_ln_fused_grid(t, rows);
  double2* partial = scratch.get<double2>(G * cols);
  if (partial == nullptr) return false;
  const bool vec = t.V == 4 && aligned16(dy) && aligned16(xhat) && aligned16(dx) && aligned16(gamma);
  if (!dispatch_regs<kLnFusedUnits>(t, vec, [&](auto block_row, auto n, auto v, auto kvec) {
        launch_ln_bwd_fused<block_row, n, v, kvec>(t, G, s, dy, xhat, inv_std, gamma, dx, partial,
                                                   rows, cols);
      })) {
    return false;
  }
  launch_ln_colsum_finish(s, partial, G, cols, dgamma, dbeta);
  return true;
}

}  // namespace tapecheck_cuda
