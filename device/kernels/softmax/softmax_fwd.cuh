// softmax / log-softmax forward on row tiles (row_tiles.cuh).
//
// Per row: m = max x (float, exact, NaN kept; -0 turned into +0), then s = sum exp(x - m). Each
// thread sums a unit's exps in float (pairwise, <= 2 roundings of values <= 4), converts once
// per unit and adds in double; the cross-thread tree is in double. So s is within a couple of
// float ulps of the sum of the (float) exps, and each exp is that of the rounded difference
// x - m, within ~2 ulps (exp_of_diff).
// softmax keeps each exp in the register that held x, so exp runs once per element.
// A non-finite m (NaN, +inf, or a row of only -inf) gives an all-NaN row, as the spec's
// formulas do.
#pragma once

#include "softmax/max_sum.cuh"
#include "common/row_tiles.cuh"
#include "softmax/softmax_math.cuh"

namespace tapecheck_cuda {

// Per-row constants of the write, from the row's maximum and sum.
struct FwdScale {
  float m;      // the row maximum
  float scale;  // softmax: 1/s rounded once; log-softmax: log(s) rounded once
  bool bad;
};

template <bool kLog>
__device__ __forceinline__ float fwd_out(const FwdScale& r, float x_or_e) {
  if (r.bad) return CUDART_NAN_F;
  // log-softmax: (x - m) <= 0 and -log(s) <= 0 have the same sign, so the two roundings stay
  // within 1 ulp of |y|; softmax: e * (1/s), two roundings.
  return kLog ? (x_or_e - r.m) - r.scale : x_or_e * r.scale;
}

template <bool kLog>
__device__ __forceinline__ float fwd_scale_of(double s) {
  return kLog ? static_cast<float>(log(s)) : static_cast<float>(1.0 / s);
}

// The write's constants for a warp whose exps were taken about its own maximum m_w (rows held
// across a cluster, max_sum.cuh): softmax scales them by exp(m_w - m) / s, rounded once (0 for
// a warp of only -inf entries).
template <bool kLog>
__device__ __forceinline__ FwdScale fwd_scale_of_part(const MaxSum& row, float m_w) {
  FwdScale r;
  r.m = row.m;
  r.bad = !isfinite(row.m);
  r.scale = kLog ? static_cast<float>(log(row.s))
                 : static_cast<float>(exp(static_cast<double>(m_w) - static_cast<double>(row.m)) / row.s);
  return r;
}

// Rows held in registers: N units of V floats per thread.
template <bool kLog, bool kBlockRow, int N, int V, bool kVec>
__global__ void __launch_bounds__(kBlockRow ? 1024 : kBlock)
    softmax_fwd_regs(const float* __restrict__ x, float* __restrict__ y, size_t rows,
                     uint32_t cols, unsigned T) {
  __shared__ float smax[32];
  __shared__ double ssum[32];
  const unsigned lane = kBlockRow ? threadIdx.x : (threadIdx.x & (T - 1));
  const size_t per_iter = kBlockRow ? 1 : blockDim.x / T;
  const size_t slot = kBlockRow ? 0 : threadIdx.x / T;

  // Block-uniform loop bound: every lane takes part in the shuffles and barriers.
  for (size_t first = blockIdx.x * per_iter; first < rows; first += gridDim.x * per_iter) {
    const size_t row = first + slot;
    const bool live = row < rows;
    const size_t base = row * cols;
    float v[N][V];
    float m = -CUDART_INF_F;
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const size_t j = static_cast<size_t>(i * T + lane) * V;
      if (live && j < cols) load_unit<V, kVec, Reads::Once>(x, base + j, v[i]);
    }
    // All loads are issued before the first use.
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const size_t j = static_cast<size_t>(i * T + lane) * V;
      if (live && j < cols) {
#pragma unroll
        for (int k = 0; k < V; ++k) m = fmax_nan(m, v[i][k]);
      }
    }
    FwdScale r;
    r.m = row_max<kBlockRow>(m, T, smax) + 0.0f;  // + 0: a zero maximum is +0 whichever met first
    r.bad = !isfinite(r.m);
    double s = 0.0;
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const size_t j = static_cast<size_t>(i * T + lane) * V;
      if (live && j < cols && !r.bad) {
        float e[V];
#pragma unroll
        for (int k = 0; k < V; ++k) e[k] = exp_of_diff(v[i][k], r.m);
        s += static_cast<double>(unit_sum<V>(e));
        if constexpr (!kLog) {
#pragma unroll
          for (int k = 0; k < V; ++k) v[i][k] = e[k];
        }
      }
    }
    s = row_sum<kBlockRow>(s, T, ssum);
    r.scale = fwd_scale_of<kLog>(s);
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const size_t j = static_cast<size_t>(i * T + lane) * V;
      if (live && j < cols) {
        float o[V];
#pragma unroll
        for (int k = 0; k < V; ++k) o[k] = fwd_out<kLog>(r, v[i][k]);
        store_unit<V, kVec>(y, base + j, o);
      }
    }
  }
}

// Rows longer than the registers hold: one block per row, two passes. The first keeps, per
// thread, a running maximum mt and sum st = sum exp(x - mt) in double, rescaled by the double
// factor exp(mt_old - mt_new) when the maximum grows (each term is still one float exp of x
// minus a float maximum, and the rescalings cost double roundings only, so the accuracy is
// that of the register path). The block then combines st * exp(mt - m) in thread order. The
// second pass re-reads the row (from L2) and writes. A row whose values keep rising pays a
// double exp per unit; that is slower, never less accurate.
constexpr int kStreamUnroll = 4;

template <bool kLog, int V, bool kVec>
__global__ void __launch_bounds__(1024, 1)
    softmax_fwd_stream(const float* __restrict__ x, float* __restrict__ y, size_t rows,
                       uint32_t cols) {
  __shared__ float smax[32];
  __shared__ double ssum[32];
  const size_t step = static_cast<size_t>(blockDim.x) * V;
  for (size_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const size_t base = row * cols;
    float mt = -CUDART_INF_F;
    double st = 0.0;
    for (size_t j0 = threadIdx.x * V; j0 < cols; j0 += step * kStreamUnroll) {
      float v[kStreamUnroll][V];
#pragma unroll
      for (int u = 0; u < kStreamUnroll; ++u) {
        const size_t j = j0 + u * step;
        if (j < cols) {
          load_unit<V, kVec>(x, base + j, v[u]);
        } else {
#pragma unroll
          for (int k = 0; k < V; ++k) v[u][k] = -CUDART_INF_F;
        }
      }
#pragma unroll
      for (int u = 0; u < kStreamUnroll; ++u) {
        float cm = v[u][0];
#pragma unroll
        for (int k = 1; k < V; ++k) cm = fmax_nan(cm, v[u][k]);
        // !(cm <= mt) also catches a NaN, which then sticks in mt and st (the row is bad).
        if (!(cm <= mt)) {
          if (mt != -CUDART_INF_F) st *= exp(static_cast<double>(mt) - static_cast<double>(cm));
          mt = fmax_nan(mt, cm);  // = cm, except that a NaN already met is kept
        }
        if (mt != -CUDART_INF_F) {  // all -inf so far: nothing to add (and -inf - -inf is NaN)
          float e[V];
#pragma unroll
          for (int k = 0; k < V; ++k) e[k] = exp_of_diff(v[u][k], mt);
          st += static_cast<double>(unit_sum<V>(e));
        }
      }
    }
    FwdScale r;
    r.m = row_max<true>(mt, 1024, smax) + 0.0f;
    r.bad = !isfinite(r.m);
    double part = 0.0;
    if (!r.bad && mt != -CUDART_INF_F) part = st * exp(static_cast<double>(mt) - static_cast<double>(r.m));
    const double s = row_sum<true>(part, 1024, ssum);
    r.scale = fwd_scale_of<kLog>(s);
    for (size_t j0 = threadIdx.x * V; j0 < cols; j0 += step * kStreamUnroll) {
      float v[kStreamUnroll][V];
#pragma unroll
      for (int u = 0; u < kStreamUnroll; ++u) {
        const size_t j = j0 + u * step;
        if (j < cols) load_unit<V, kVec>(x, base + j, v[u]);
      }
#pragma unroll
      for (int u = 0; u < kStreamUnroll; ++u) {
        const size_t j = j0 + u * step;
        if (j < cols) {
          float o[V];
#pragma unroll
          for (int k = 0; k < V; ++k) {
            o[k] = fwd_out<kLog>(r, kLog || r.bad ? v[u][k] : exp_of_diff(v[u][k], r.m));
          }
          store_unit<V, kVec>(y, base + j, o);
        }
      }
    }
  }
}

}  // namespace tapecheck_cuda
