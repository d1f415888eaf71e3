// The normalization arithmetic shared by layer norm (a row = one position's embedDim values,
// gamma/beta per column) and batch norm (a row = one channel's S values, gamma/beta per row).
//
// Forward, as docs/spec.md writes it: mean = sum(x)/N; c = x - mean; the variance is taken of
// c - mean(c) (centered a second time, on purpose); var = max(varRaw, 0) with NaN kept;
// std = sqrt(max(var + eps, 0)). Three reductions in double. The mean is carried as a double-double
// (compensated sum, then hi + lo): with a plain double mean of a row near 1e4, an entry within
// 1e-6 of the mean would get c, and so xhat, wrong by tens of float ulps.
//
// Backward, with g = dy * gamma: dx = invStd * (g - mean(g) - xhat * mean(g * xhat)).
#pragma once

#include "common/reduce.cuh"

namespace tapecheck_cuda {

// max(v, 0) that keeps NaN (fmax would turn a NaN variance into 0).
__device__ __forceinline__ double clamp_variance(double v) { return v > 0.0 ? v : (v != v ? v : 0.0); }

// 1 / sqrtSpec(var + eps), the Spec's clamped square root (docs/spec.md#clamped-sqrt): a sum of
// -0 or below gives std = +0 and so +inf, a NaN stays NaN. A negative eps is allowed.
__device__ __forceinline__ double inv_clamped_std(double var, float eps) {
  const double d = var + static_cast<double>(eps);
  return 1.0 / sqrt(d <= 0.0 ? 0.0 : d);
}

// The row kernels' forward statistics in one reduction (norm_tiles.cuh, norm_cluster.cuh).
// The three dependent reductions written above each cost a barrier (an exchange across
// blocks), and a long row's threads wait on those, not on the arithmetic; one reduction of two
// sums gives the same statistics to far below a float ulp:
//
// every thread sums d = x - K and d^2 in double, about a shift K that is an entry of the row
// (its first). Then mean = K + S/N and var = Q/N - (S/N)^2, which in real arithmetic is the
// spec's varRaw (the second centering removes only rounding error: mean(c) = 0 exactly).
// d is exact in double (a difference of two floats); d^2 and the sums round at 2^-53, and a
// thread adds at most 32 terms before the tree across threads, so S and Q are accurate to
// about 2^-47 relative. The subtraction cannot cancel badly because K is an entry:
// (mean - K)^2 <= max (x - mean)^2 <= N var, so Q/N <= (N + 1) var, and even in the worst
// case (an outlier first) it magnifies that error at most N + 1 times: var is accurate to
// about 2^-30 relative for the rows that use it (N <= 2^17), against float's 2^-24; without
// an outlier, to double rounding. NaN or infinite entries make S or Q NaN and so, as the
// spec's formulas do, every output of the row NaN. (The stream kernel, for longer rows, keeps
// the spec's order.)
struct ShiftedMoments {
  double s = 0.0;  // sum of x - K
  double q = 0.0;  // sum of (x - K)^2
  // Element by element: adding a unit's 4 terms pairwise first (shorter chains, more double
  // operations) is 0.005-0.016 of copy speed slower at 128-512 columns (CHANGELOG 1.3.0).
  template <int V>
  __device__ __forceinline__ void add(const float (&x)[V], float shift) {
#pragma unroll
    for (int k = 0; k < V; ++k) {
      const double d = static_cast<double>(x[k]) - static_cast<double>(shift);
      s += d;
      q = fma(d, d, q);
    }
  }
};

// The row's mean (as a float pair hi + lo, see norm_tiles.cuh) and 1/sqrt(var + eps) from the
// row's totals S and Q about `shift`.
struct NormStats {
  float mean_hi, mean_lo, inv_std;
};

__device__ __forceinline__ NormStats norm_stats(double s, double q, double n, float shift, float eps) {
  const double dmean = s / n;
  const double mean = static_cast<double>(shift) + dmean;
  const double var = clamp_variance(fma(-dmean, dmean, q / n));
  NormStats r;
  r.mean_hi = static_cast<float>(mean);
  r.mean_lo = static_cast<float>(mean - static_cast<double>(r.mean_hi));
  r.inv_std = static_cast<float>(inv_clamped_std(var, eps));
  return r;
}

// A row's backward sums, in the order one reduction takes them (row_sums, cluster_sums):
// sum g and sum g * xhat; batch norm (kPerRow) also sum dy (dbeta) and sum dy * xhat (dgamma).
template <bool kPerRow>
struct NormBwdSums {
  static constexpr int K = kPerRow ? 4 : 2;
  double v[K];
  __device__ __forceinline__ NormBwdSums(double g, double gx, double d, double dx) {
    v[0] = g;
    v[1] = gx;
    if constexpr (kPerRow) {
      v[2] = d;
      v[3] = dx;
    }
  }
};

template <bool kPerRowAffine>
struct NormFwd {
  static constexpr int kStages = 3;
  static constexpr int kWidth = 2;
  static constexpr bool kGlobal = false;
  __host__ __device__ static constexpr Red kind(int k) { return k == 0 ? Red::Sum2 : Red::Sum; }
  struct Row {
    double mean, mean_lo, mean_c, inv_std;  // mean + mean_lo: the mean to ~2^-106
    float gamma, beta;  // the row's affine parameters when kPerRowAffine
  };
  struct Elem {
    float x;
  };
  const float* x;
  const float* gamma;
  const float* beta;
  float* y;
  float* xhat;
  float* inv_std;
  uint32_t cols;
  float eps;

  __device__ size_t row_base(size_t row) const { return row * cols; }
  __device__ size_t stride() const { return 1; }
  __device__ Row row_begin(size_t row) const {
    Row R{};
    if (kPerRowAffine) {
      R.gamma = gamma[row];
      R.beta = beta[row];
    }
    return R;
  }
  __device__ Elem load(const Row&, size_t idx, uint32_t) const { return Elem{x[idx]}; }
  // x - mean_hi is exact when x is near the mean (Sterbenz); subtracting mean_lo then leaves
  // c correct to a double rounding relative to c itself.
  __device__ static double centered(const Row& R, float x) {
    return (static_cast<double>(x) - R.mean) - R.mean_lo;
  }
  __device__ Acc<2> value(int k, const Row& R, const Elem& e, uint32_t) const {
    if (k == 0) return Acc<2>{{static_cast<double>(e.x), 0.0}};
    const double c = centered(R, e.x);
    if (k == 1) return Acc<2>{{c, 0.0}};
    const double cc = c - R.mean_c;
    return Acc<2>{{cc * cc, 0.0}};
  }
  __device__ void stage_done(int k, Row& R, const Acc<2>& a) const {
    const double n = static_cast<double>(cols);
    if (k == 0) {
      // (hi + lo) / n as a pair: fma gives the exact remainder hi - mean * n.
      R.mean = a.v[0] / n;
      R.mean_lo = (fma(-R.mean, n, a.v[0]) + a.v[1]) / n;
    } else if (k == 1) {
      R.mean_c = a.v[0] / n;
    } else {
      const double var = clamp_variance(a.v[0] / n);
      R.inv_std = inv_clamped_std(var, eps);
    }
  }
  __device__ void row_done(const Row& R, size_t row) const {
    inv_std[row] = static_cast<float>(R.inv_std);
  }
  __device__ double write(const Row& R, const Elem& e, size_t idx, uint32_t j) const {
    const double xh = centered(R, e.x) * R.inv_std;
    const double g = kPerRowAffine ? R.gamma : gamma[j];
    const double b = kPerRowAffine ? R.beta : beta[j];
    xhat[idx] = static_cast<float>(xh);
    // y from the unrounded xhat: closer to the spec's real-number value than the stored float.
    y[idx] = static_cast<float>(fma(xh, g, b));
    return 0.0;
  }
};

}  // namespace tapecheck_cuda
