// The per-row arithmetic of the (log-)softmax forward, shared by softmax.cu and cross_entropy.cu.
//
// The spec's two passes are kept as two reductions: m = max_j x_j (NaN kept), then
// s = sum_j exp(x_j - m). Any non-finite m (a NaN, a +inf, or a row of only -inf) yields an
// all-NaN row, which is what the spec's formulas give (inf - inf, 0/0); -inf entries next to a
// finite maximum contribute exp(-inf) = 0. Keeping the exact maximum (rather than an online
// rescaled sum) means no extra rounding enters s.
#pragma once

#include "reduce.cuh"

namespace tapecheck_cuda {

// exp(d) for d = x - m <= 0, with d held exactly in double. expf alone would see d rounded to
// float, an error of up to |d| * 2^-24 in the exponent (~40 ulps of the result near d = -87);
// the first-order term restores it, leaving expf's own error (2 ulps at most).
__device__ __forceinline__ double exp_of_diff(double d) {
  const float df = static_cast<float>(d);
  const float e = expf(df);
  if (e == 0.0f) return 0.0;  // also covers d = -inf, where d - df would be NaN
  return static_cast<double>(e) * (1.0 + (d - static_cast<double>(df)));
}

struct MaxSumRow {
  double m;       // the row maximum
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
    if (k == 0) return Acc<1>{{static_cast<double>(x) + 0.0}};
    return Acc<1>{{R.bad ? 0.0 : exp_of_diff(static_cast<double>(x) - R.m)}};
  }

  __device__ static void stage_done(int k, MaxSumRow& R, const Acc<1>& a) {
    if (k == 0) {
      R.m = a.v[0];
      R.bad = !isfinite(R.m);
    } else {
      R.scale = kLog ? log(a.v[0]) : 1.0 / a.v[0];
    }
  }

  // log-softmax: (x - m) - log(s), computed in double from the exact difference.
  __device__ static double log_prob(const MaxSumRow& R, float x) {
    return R.bad ? CUDART_NAN : (static_cast<double>(x) - R.m) - R.scale;
  }

  __device__ static float prob(const MaxSumRow& R, float x) {
    return R.bad ? CUDART_NAN_F
                 : static_cast<float>(exp_of_diff(static_cast<double>(x) - R.m) * R.scale);
  }
};

}  // namespace tapecheck_cuda
