// softmax / log-softmax backward on row tiles (row_tiles.cuh). One row sum each:
//   softmax:     s = sum dy * y, dx = y * (dy - s)
//   log-softmax: s = sum dy,     dx = dy - exp(y) * s
// Terms are formed and summed per unit in float (pairwise), converted once per unit and added
// in double; the cross-thread tree is in double. Every term's rounding is relative to that
// term, so s is off by about 2^-24 * sum|terms|, which the write multiplies by y (or exp(y)):
// within an ulp of the judged scale (max y * max|dy|, resp. exp(y) * sum|dy|).
#pragma once

#include "common/row_tiles.cuh"

namespace tapecheck_cuda {

template <bool kLog, int V>
__device__ __forceinline__ float bwd_unit_term(const float (&y)[V], const float (&dy)[V]) {
  float t[V];
#pragma unroll
  for (int k = 0; k < V; ++k) t[k] = kLog ? dy[k] : dy[k] * y[k];
  return unit_sum<V>(t);
}

template <bool kLog>
__device__ __forceinline__ float bwd_out(float y, float dy, float s) {
  return kLog ? fmaf(-expf(y), s, dy) : y * (dy - s);
}

template <bool kLog, bool kBlockRow, int N, int V, bool kVec>
__global__ void __launch_bounds__(kBlockRow ? 1024 : kBlock)
    softmax_bwd_regs(const float* __restrict__ y, const float* __restrict__ dy,
                     float* __restrict__ dx, size_t rows, uint32_t cols, unsigned T) {
  __shared__ double ssum[32];
  const unsigned lane = kBlockRow ? threadIdx.x : (threadIdx.x & (T - 1));
  const size_t per_iter = kBlockRow ? 1 : blockDim.x / T;
  const size_t slot = kBlockRow ? 0 : threadIdx.x / T;

  for (size_t first = blockIdx.x * per_iter; first < rows; first += gridDim.x * per_iter) {
    const size_t row = first + slot;
    const bool live = row < rows;
    const size_t base = row * cols;
    float a[N][V], b[N][V];
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const size_t j = static_cast<size_t>(i * T + lane) * V;
      if (live && j < cols) {
        load_unit<V, kVec, Reads::Once>(y, base + j, a[i]);
        load_unit<V, kVec, Reads::Once>(dy, base + j, b[i]);
      }
    }
    double s = 0.0;
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const size_t j = static_cast<size_t>(i * T + lane) * V;
      if (live && j < cols) s += static_cast<double>(bwd_unit_term<kLog, V>(a[i], b[i]));
    }
    const float sf = static_cast<float>(row_sum<kBlockRow>(s, T, ssum));
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const size_t j = static_cast<size_t>(i * T + lane) * V;
      if (live && j < cols) {
        float o[V];
#pragma unroll
        for (int k = 0; k < V; ++k) o[k] = bwd_out<kLog>(a[i][k], b[i][k], sf);
        store_unit<V, kVec>(dx, base + j, o);
      }
    }
  }
}

// Rows longer than the registers hold: one block per row, the sum pass and then the write
// pass, which re-reads the row's two inputs (from L2: one block per multiprocessor keeps the
// rows in flight to 132 * 2 * 4 * cols bytes).
template <bool kLog, int V, bool kVec>
__global__ void __launch_bounds__(1024, 1)
    softmax_bwd_stream(const float* __restrict__ y, const float* __restrict__ dy,
                       float* __restrict__ dx, size_t rows, uint32_t cols) {
  constexpr int U = 2;  // two arrays: 2 x 2 units in flight per thread, without spills
  __shared__ double ssum[32];
  const size_t step = static_cast<size_t>(blockDim.x) * V;
  for (size_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const size_t base = row * cols;
    double s = 0.0;
    for (size_t j0 = threadIdx.x * V; j0 < cols; j0 += step * U) {
      float a[U][V], b[U][V];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const size_t j = j0 + u * step;
        if (j < cols) {
          load_unit<V, kVec>(y, base + j, a[u]);
          load_unit<V, kVec>(dy, base + j, b[u]);
        }
      }
#pragma unroll
      for (int u = 0; u < U; ++u) {
        if (j0 + u * step < cols) s += static_cast<double>(bwd_unit_term<kLog, V>(a[u], b[u]));
      }
    }
    const float sf = static_cast<float>(row_sum<true>(s, 1024, ssum));
    for (size_t j0 = threadIdx.x * V; j0 < cols; j0 += step * U) {
      float a[U][V], b[U][V];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const size_t j = j0 + u * step;
        if (j < cols) {
          load_unit<V, kVec>(y, base + j, a[u]);
          load_unit<V, kVec>(dy, base + j, b[u]);
        }
      }
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const size_t j = j0 + u * step;
        if (j < cols) {
          float o[V];
#pragma unroll
          for (int k = 0; k < V; ++k) o[k] = bwd_out<kLog>(a[u][k], b[u][k], sf);
          store_unit<V, kVec>(dx, base + j, o);
        }
      }
    }
  }
}

}  // namespace tapecheck_cuda
