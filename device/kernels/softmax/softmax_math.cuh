// The per-row arithmetic of the (log-)softmax forward, shared by softmax.cu and cross_entropy.cu.
//
// The spec's two passes are kept as two reductions: m = max_j x_j (NaN kept), then
// s = sum_j exp(x_j - m). Any non-finite m (a NaN, a +inf, or a row of only -inf) yields an
// all-NaN row, which is what the spec's formulas give (inf - inf, 0/0); -inf entries next to a
// finite maximum contribute exp(-inf) = 0. Keeping the exact maximum (rather than an online
// rescaled sum) means no extra rounding enters s.
#pragma once

#include "common/reduce.cuh"

namespace tapecheck_cuda {

// exp(x - m) for x <= m, both floats: the fast exponential (ex2.approx) of the difference
// rounded to float. Against the exact exp(x - m) that is off by about |x - m| * 2^-24 relative
// (the difference's rounding, as the spec's formula evaluated in binary32 has it, and the
// scaling by log2(e)) and by the approximation's own ~2 ulps. docs/spec.md's budget judges each
// output against the row's largest probability (conformance/budgets.h), and there an error of
// |d| * 2^-24 relative on exp(d) is |d| e^d / 2 <= 0.19 ulps. The exact difference and CUDA's
// accurate expf would cost about 12 more instructions an element, on which the clusters of
// 32K-64K columns wait.
// Softmax forward at 64K: 0.875-0.879 -> 0.937-0.940 of copy speed; largest error 1.532 ulps
// (CHANGELOG 1.20.0).
__device__ __forceinline__ float exp_of_diff(float x, float m) { return __expf(x - m); }

struct MaxSumRow {
  float m;        // the row maximum (a float, as every entry is)
  double scale;   // 1/s for softmax, log(s) for log-softmax
  bool bad;       // the maximum is not finite: the whole row is NaN
};

template <bool kLog>
struct MaxSumStages {
  static constexpr int kStages = 2;
  static constexpr int kWidth = 1;
  __host__ __device__ static constexpr Red kind(int k) { return k == 0 ? Red::Max : Red::Sum; }

  __device__ static Acc<1> value(int k, const MaxSumRow& R, float x) {
    // + 0.0 turns -0 into +0, so the maximum does not depend on which zero is met first.
    if (k == 0) return Acc<1>{{static_cast<double>(x + 0.0f)}};
    return Acc<1>{{R.bad ? 0.0 : static_cast<double>(exp_of_diff(x, R.m))}};
  }

  __device__ static void stage_done(int k, MaxSumRow& R, const Acc<1>& a) {
    if (k == 0) {
      R.m = static_cast<float>(a.v[0]);  // exact: the maximum of floats
      R.bad = !isfinite(R.m);
    } else {
      R.scale = kLog ? log(a.v[0]) : 1.0 / a.v[0];
    }
  }

  // log-softmax: (x - m) - log(s), computed in double from the exact difference.
  __device__ static double log_prob(const MaxSumRow& R, float x) {
    return R.bad ? CUDART_NAN : (static_cast<double>(x) - static_cast<double>(R.m)) - R.scale;
  }

  __device__ static float prob(const MaxSumRow& R, float x) {
    return R.bad ? CUDART_NAN_F : static_cast<float>(static_cast<double>(exp_of_diff(x, R.m)) * R.scale);
  }
};

}  // namespace tapecheck_cuda
