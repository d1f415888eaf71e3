// Fixed-order reductions: every sum is taken in the same order on every run, so results are
// bit-for-bit repeatable (no atomics on floating-point values anywhere).
#pragma once

#include <math_constants.h>

#include "common/common.cuh"

namespace tapecheck_cuda {

// Sum: plain double sums, componentwise. Max: componentwise maximum keeping NaN.
// Sum2: one compensated sum carried as an unevaluated pair v[0] + v[1] (double-double), for a
// sum whose rounding error matters downstream (the mean of a row with a large offset).
enum class Red { Sum, Max, Sum2 };

// N partial results carried together through one reduction (one pass over the data can feed
// several sums, e.g. sum(g) and sum(g * xhat)). Accumulation is in double: the float inputs'
// products and sums lose nothing that matters at binary32 precision.
template <int N>
struct Acc {
  double v[N];
};

// A maximum that keeps NaN: fmax would drop it, and a NaN row must come out all NaN.
__device__ __forceinline__ double max_keep_nan(double a, double b) {
  return (a > b || a != a) ? a : b;
}

// (hi, lo) += (bhi, blo) by TwoSum: the rounding error of hi + bhi is exact and does not
// depend on the order of the operands, so this is commutative bit for bit, as the butterfly
// below needs. A non-finite sum is passed on as a plain sum would be.
__device__ __forceinline__ void add_pair(double& hi, double& lo, double bhi, double blo) {
  const double s = hi + bhi;
  if (!isfinite(s)) {
    hi = s;
    lo = 0.0;
    return;
  }
  const double bb = s - hi;
  const double err = (hi - (s - bb)) + (bhi - bb);
  const double l = (lo + blo) + err;
  hi = s + l;
  lo = l - (hi - s);
}

template <int N>
__device__ __forceinline__ Acc<N> acc_identity(Red r) {
  Acc<N> a;
#pragma unroll
  for (int i = 0; i < N; ++i) a.v[i] = (r == Red::Max) ? -CUDART_INF : 0.0;
  return a;
}

template <int N>
__device__ __forceinline__ void acc_combine(Red r, Acc<N>& a, const Acc<N>& b) {
  if constexpr (N >= 2) {
    if (r == Red::Sum2) {
      add_pair(a.v[0], a.v[1], b.v[0], b.v[1]);
      return;
    }
  }
#pragma unroll
  for (int i = 0; i < N; ++i) a.v[i] = (r == Red::Max) ? max_keep_nan(a.v[i], b.v[i]) : a.v[i] + b.v[i];
}

// Butterfly over aligned groups of g lanes (g a power of two, at most 32). Both partners of
// each exchange add the same two numbers, and addition is commutative, so every lane of a
// group ends with the identical result. All 32 lanes of the warp must call it.
template <int N>
__device__ __forceinline__ void group_allreduce(Red r, Acc<N>& a, unsigned g) {
  for (unsigned off = g >> 1; off != 0; off >>= 1) {
    Acc<N> o;
#pragma unroll
    for (int i = 0; i < N; ++i) o.v[i] = __shfl_xor_sync(0xffffffffu, a.v[i], off);
    acc_combine(r, a, o);
  }
}

// Whole-block reduction; every thread gets the result. `smem` holds one entry per warp.
// Ends with a barrier so that `smem` may be reused at once.
template <int N>
__device__ __forceinline__ Acc<N> block_allreduce(Red r, Acc<N> a, Acc<N>* smem) {
  group_allreduce(r, a, 32);
  const unsigned warp = threadIdx.x >> 5;
  const unsigned warps = blockDim.x >> 5;
  if ((threadIdx.x & 31u) == 0) smem[warp] = a;
  __syncthreads();
  Acc<N> t = smem[0];
  for (unsigned w = 1; w < warps; ++w) acc_combine(r, t, smem[w]);
  __syncthreads();
  return t;
}

// Sums `count` doubles into one, in a fixed order, with a single block.
__device__ __forceinline__ double block_sum_array(const double* p, size_t count, Acc<1>* smem) {
  Acc<1> a{{0.0}};
  for (size_t i = threadIdx.x; i < count; i += blockDim.x) a.v[0] += p[i];
  return block_allreduce(Red::Sum, a, smem).v[0];
}

}  // namespace tapecheck_cuda
