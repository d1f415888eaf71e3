// The legitimate gallery: kernel ABI v1 plugins on host memory (memory = 0) that implement
// docs/spec.md#operations correctly in binary32 arithmetic only -- every sum, mean, variance, exp and
// log is a float, as in a real float32 kernel -- each in one of the styles real kernels are
// written in. `tapecheck certify` must certify every one of them (the budgets exist to accept
// exactly this kind of rounding) while it rejects every mutant of device/plugins/mutants.txt.
//
// Compiled with -DTAPECHECK_LEGIT_STYLE=<id>, an identifier of `enum Style` below (the gallery
// name with `-` written `_`); device/plugins/legit.txt lists the gallery. The style `sequential`
// (one float accumulator per row, left to right) is listed in device/plugins/rejected-styles.txt
// instead: conformance/README.md says why the budgets do not accept it.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numeric>
#include <vector>

#include "approx_math.h"
#include "reductions.h"
#include "tapecheck/kernels_v1.h"

namespace {

using namespace tapecheck_legit;
using u32 = std::uint32_t;
using std::size_t;

enum Style {
  lanes_32,        // warp-shaped: 32 strided partial sums, then a tree
  lanes_256,       // block-shaped: 256 strided partial sums, then a tree
  pairwise,        // recursive halving, 8 terms at the leaves
  kahan,           // one compensated loop per row
  online_softmax,  // softmax statistics in one pass: running max and rescaled sum per lane
  welford_norm,    // normalization statistics by Welford per lane, merged by Chan's formula
  two_pass_norm,   // mean, then the mean of (x - mean)^2: the textbook two-pass variance
  approx_exp_log,  // exp and log from float polynomials, one ulp off on purpose (<= 2 ulps)
  sequential,      // one float accumulator per row, left to right (not accepted)
};

enum class SoftmaxStats { TwoPass, Online };
// SpecOrder: docs/spec.md's order, mean, c = x - mean, the variance of c - mean(c).
enum class NormStats { SpecOrder, TwoPass, Welford };

struct Recipe {
  SumKind sum;
  SoftmaxStats softmax;
  NormStats norm;
  bool approxMath;
};

// Every style but the lane widths varies one thing against lanes-32, the narrowest reduction
// a GPU kernel uses (a warp per row): its partial sums are the longest chains in the gallery.
constexpr Recipe recipeOf(Style s) {
  switch (s) {
    case lanes_32:
      return {SumKind::Lanes32, SoftmaxStats::TwoPass, NormStats::SpecOrder, false};
    case lanes_256:
      return {SumKind::Lanes256, SoftmaxStats::TwoPass, NormStats::SpecOrder, false};
    case pairwise:
      return {SumKind::Pairwise, SoftmaxStats::TwoPass, NormStats::SpecOrder, false};
    case kahan:
      return {SumKind::Kahan, SoftmaxStats::TwoPass, NormStats::SpecOrder, false};
    case online_softmax:
      return {SumKind::Lanes32, SoftmaxStats::Online, NormStats::SpecOrder, false};
    case welford_norm:
      return {SumKind::Lanes32, SoftmaxStats::TwoPass, NormStats::Welford, false};
    case two_pass_norm:
      return {SumKind::Lanes32, SoftmaxStats::TwoPass, NormStats::TwoPass, false};
    case approx_exp_log:
      return {SumKind::Lanes32, SoftmaxStats::TwoPass, NormStats::SpecOrder, true};
    case sequential:
      break;
  }
  return {SumKind::Sequential, SoftmaxStats::TwoPass, NormStats::SpecOrder, false};
}

#ifndef TAPECHECK_LEGIT_STYLE
#error "compile with -DTAPECHECK_LEGIT_STYLE=<an identifier of enum Style>"
#endif
#ifndef TAPECHECK_PLUGIN_NAME
#error "compile with -DTAPECHECK_PLUGIN_NAME=\"tapecheck-legit-<name>\""
#endif
constexpr Recipe kRecipe = recipeOf(TAPECHECK_LEGIT_STYLE);

float fexp(float x) { return kRecipe.approxMath ? approxExp(x) : std::exp(x); }
float flog(float x) { return kRecipe.approxMath ? approxLog(x) : std::log(x); }

template <class Term>
float rowSum(u32 n, Term&& term) {
  return sum(kRecipe.sum, n, term);
}

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// Every entry catches whatever escapes (std::bad_alloc from a scratch vector) and returns 1.
template <class Body>
int guarded(Body&& body) noexcept {
  try {
    body();
    return 0;
  } catch (...) {
    return 1;
  }
}

// n values `stride` apart: a row (stride 1) or a slice along an axis (stride inner).
struct Slice {
  const float* p;
  size_t stride;
  float operator[](size_t j) const { return p[j * stride]; }
};

// ---- softmax statistics -------------------------------------------------------------------------

// m = max_j x_j, s = sum_j exp(x_j - m). A row whose maximum is not finite (a NaN, a +inf, only
// -inf) is NaN throughout, as docs/spec.md's formulas make it (inf - inf, 0/0): `bad`.
struct RowStats {
  float m = -kInf;
  float s = 0.0f;
  bool bad() const { return !std::isfinite(m); }
};

float rowMax(Slice x, u32 n) {
  float m = -kInf;
  for (u32 j = 0; j < n; ++j) {
    if (std::isnan(x[j])) return x[j];
    m = std::max(m, x[j]);
  }
  return m;
}

RowStats twoPassStats(Slice x, u32 n) {
  RowStats r;
  r.m = rowMax(x, n);
  r.s = rowSum(n, [&](u32 j) { return fexp(x[j] - r.m); });
  return r;
}

// Online normalizer (Milakov and Gimelshein 2018): each lane keeps its running maximum and its
// sum rescaled to it; lanes merge by rescaling both sums to the larger maximum. -inf entries
// add nothing; a NaN poisons the lane (the row is then bad).
RowStats onlineStats(Slice x, u32 n) {
  auto add = [&](RowStats& a, u32 j) {
    const float v = x[j];
    if (std::isnan(v) || std::isnan(a.m)) {
      a.m = std::isnan(v) ? v : a.m;
      return;
    }
    if (v > a.m) {
      a.s = (a.m == -kInf ? 0.0f : a.s * fexp(a.m - v)) + 1.0f;
      a.m = v;
    } else if (v != -kInf) {
      a.s += fexp(v - a.m);
    }
  };
  auto merge = [](RowStats& a, const RowStats& b) {
    if (std::isnan(a.m) || std::isnan(b.m)) {
      a.m = std::isnan(a.m) ? a.m : b.m;
      return;
    }
    const float m = std::max(a.m, b.m);
    if (m == -kInf) return;
    a.s = (a.m == -kInf ? 0.0f : a.s * fexp(a.m - m)) + (b.m == -kInf ? 0.0f : b.s * fexp(b.m - m));
    a.m = m;
  };
  return reduce(kRecipe.sum, n, RowStats{}, add, merge);
}

RowStats softmaxStats(Slice x, u32 n) {
  return kRecipe.softmax == SoftmaxStats::Online ? onlineStats(x, n) : twoPassStats(x, n);
}

// ---- softmax and log-softmax --------------------------------------------------------------------

// y_i = exp(x_i - m) / s
int softmax_fwd(void*, u32 rows, u32 cols, const float* x, float* y) {
  return guarded([&] {
    for (size_t r = 0; r < rows; ++r) {
      const Slice xs{x + r * cols, 1};
      float* ys = y + r * cols;
      const RowStats st = softmaxStats(xs, cols);
      for (u32 j = 0; j < cols; ++j) ys[j] = st.bad() ? kNaN : fexp(xs[j] - st.m) / st.s;
    }
  });
}

// dx_i = y_i * (dy_i - sum_j dy_j * y_j)
int softmax_bwd(void*, u32 rows, u32 cols, const float* y, const float* dy, float* dx) {
  return guarded([&] {
    for (size_t r = 0; r < rows; ++r) {
      const float* ys = y + r * cols;
      const float* dys = dy + r * cols;
      float* dxs = dx + r * cols;
      const float dot = rowSum(cols, [&](u32 j) { return dys[j] * ys[j]; });
      for (u32 j = 0; j < cols; ++j) dxs[j] = ys[j] * (dys[j] - dot);
    }
  });
}

// y_i = (x_i - m) - log(s)
int log_softmax_fwd(void*, u32 rows, u32 cols, const float* x, float* y) {
  return guarded([&] {
    for (size_t r = 0; r < rows; ++r) {
      const Slice xs{x + r * cols, 1};
      float* ys = y + r * cols;
      const RowStats st = softmaxStats(xs, cols);
      const float lse = flog(st.s);
      for (u32 j = 0; j < cols; ++j) ys[j] = st.bad() ? kNaN : (xs[j] - st.m) - lse;
    }
  });
}

// dx_i = dy_i - exp(y_i) * sum_j dy_j
int log_softmax_bwd(void*, u32 rows, u32 cols, const float* y, const float* dy, float* dx) {
  return guarded([&] {
    for (size_t r = 0; r < rows; ++r) {
      const float* ys = y + r * cols;
      const float* dys = dy + r * cols;
      float* dxs = dx + r * cols;
      const float total = rowSum(cols, [&](u32 j) { return dys[j]; });
      for (u32 j = 0; j < cols; ++j) dxs[j] = dys[j] - fexp(ys[j]) * total;
    }
  });
}

// ---- topKMask -----------------------------------------------------------------------------------

// Larger first; equal values (-0 and +0 included) by lower index; NaN below every number, NaNs
// among themselves by index. Comparisons only: nothing is rounded, every style agrees.
int topk_mask(void*, u32 rows, u32 cols, u32 k, const float* x, float* mask) {
  return guarded([&] {
    std::vector<u32> order(cols);
    const u32 kept = std::min(k, cols);
    for (size_t r = 0; r < rows; ++r) {
      const float* xs = x + r * cols;
      float* ms = mask + r * cols;
      std::iota(order.begin(), order.end(), u32{0});
      auto before = [&](u32 i, u32 j) {
        const bool iNaN = std::isnan(xs[i]), jNaN = std::isnan(xs[j]);
        if (iNaN || jNaN) return !iNaN && jNaN;
        return xs[i] > xs[j];
      };
      std::stable_sort(order.begin(), order.end(), before);
      std::fill(ms, ms + cols, 0.0f);
      for (u32 i = 0; i < kept; ++i) ms[order[i]] = 1.0f;
    }
  });
}

// ---- layerNorm and batchNorm --------------------------------------------------------------------

struct Moments {
  float mean = 0.0f;
  float var = 0.0f;  // docs/spec.md's varRaw, before the clamp at 0
};

// docs/spec.md's order: mean = sum(x)/N; c = x - mean; varRaw = sum((c - mean(c))^2)/N.
Moments specOrderMoments(const float* x, u32 n) {
  const float nf = static_cast<float>(n);
  Moments mo;
  mo.mean = rowSum(n, [&](u32 j) { return x[j]; }) / nf;
  const float meanC = rowSum(n, [&](u32 j) { return x[j] - mo.mean; }) / nf;
  mo.var = rowSum(n, [&](u32 j) {
             const float d = (x[j] - mo.mean) - meanC;
             return d * d;
           }) /
           nf;
  return mo;
}

Moments twoPassMoments(const float* x, u32 n) {
  const float nf = static_cast<float>(n);
  Moments mo;
  mo.mean = rowSum(n, [&](u32 j) { return x[j]; }) / nf;
  mo.var = rowSum(n, [&](u32 j) {
             const float d = x[j] - mo.mean;
             return d * d;
           }) /
           nf;
  return mo;
}

// Welford per lane (count, mean, sum of squared deviations), lanes merged by Chan et al.
struct Welford {
  float count = 0.0f, mean = 0.0f, m2 = 0.0f;
};

Moments welfordMoments(const float* x, u32 n) {
  auto add = [&](Welford& w, u32 j) {
    w.count += 1.0f;
    const float d = x[j] - w.mean;
    w.mean += d / w.count;
    w.m2 += d * (x[j] - w.mean);
  };
  auto merge = [](Welford& a, const Welford& b) {
    if (b.count == 0.0f) return;
    if (a.count == 0.0f) {
      a = b;
      return;
    }
    const float count = a.count + b.count;
    const float d = b.mean - a.mean;
    a.mean += d * (b.count / count);
    a.m2 += b.m2 + d * d * (a.count * (b.count / count));
    a.count = count;
  };
  const Welford w = reduce(kRecipe.sum, n, Welford{}, add, merge);
  return {w.mean, w.m2 / static_cast<float>(n)};
}

Moments moments(const float* x, u32 n) {
  switch (kRecipe.norm) {
    case NormStats::TwoPass:
      return twoPassMoments(x, n);
    case NormStats::Welford:
      return welfordMoments(x, n);
    case NormStats::SpecOrder:
      break;
  }
  return specOrderMoments(x, n);
}

// Standardizes one row: var = max(varRaw, 0) (NaN kept), invStd = 1/sqrt(max(var + eps, 0))
// (the spec's clamped square root, docs/spec.md#clamped-sqrt: a sum of 0 or below gives +inf),
// xhat = (x - mean) * invStd. Returns invStd.
float standardize(const float* x, u32 n, float eps, float* xhat) {
  const Moments mo = moments(x, n);
  const float var = mo.var > 0.0f || std::isnan(mo.var) ? mo.var : 0.0f;
  const float sum = var + eps;
  const float invStd = 1.0f / std::sqrt(sum > 0.0f || std::isnan(sum) ? sum : 0.0f);
  for (u32 j = 0; j < n; ++j) xhat[j] = (x[j] - mo.mean) * invStd;
  return invStd;
}

// y = xhat * gamma + beta, gamma and beta by column
int layer_norm_fwd(void*, u32 rows, u32 cols, float eps, const float* x, const float* gamma,
                   const float* beta, float* y, float* xhat, float* inv_std) {
  return guarded([&] {
    for (size_t r = 0; r < rows; ++r) {
      const size_t off = r * cols;
      inv_std[r] = standardize(x + off, cols, eps, xhat + off);
      for (u32 j = 0; j < cols; ++j) y[off + j] = xhat[off + j] * gamma[j] + beta[j];
    }
  });
}

// y = xhat * gamma[c] + beta[c] over the channel's S values
int batch_norm_fwd(void*, u32 channels, u32 spatial, float eps, const float* x,
                   const float* gamma, const float* beta, float* y, float* xhat,
                   float* inv_std) {
  return guarded([&] {
    for (size_t c = 0; c < channels; ++c) {
      const size_t off = c * spatial;
      inv_std[c] = standardize(x + off, spatial, eps, xhat + off);
      for (u32 s = 0; s < spatial; ++s) y[off + s] = xhat[off + s] * gamma[c] + beta[c];
    }
  });
}

// dx = invStd * (g - mean(g) - xhat * mean(g * xhat)) for one row, g_j = dy_j * gammaAt(j).
template <class Gamma>
void standardizeBackward(const float* dy, const float* xhat, float invStd, Gamma gammaAt, u32 n,
                         float* dx) {
  const float nf = static_cast<float>(n);
  const float meanG = rowSum(n, [&](u32 j) { return dy[j] * gammaAt(j); }) / nf;
  const float meanGX = rowSum(n, [&](u32 j) { return dy[j] * gammaAt(j) * xhat[j]; }) / nf;
  for (u32 j = 0; j < n; ++j) dx[j] = invStd * ((dy[j] * gammaAt(j) - meanG) - xhat[j] * meanGX);
}

// dgamma_j = sum over rows of dy * xhat; dbeta_j = sum over rows of dy (column sums)
int layer_norm_bwd(void*, u32 rows, u32 cols, const float* dy, const float* xhat,
                   const float* inv_std, const float* gamma, float* dx, float* dgamma,
                   float* dbeta) {
  return guarded([&] {
    for (size_t r = 0; r < rows; ++r) {
      const size_t off = r * cols;
      standardizeBackward(dy + off, xhat + off, inv_std[r], [&](u32 j) { return gamma[j]; }, cols,
                          dx + off);
    }
    for (u32 j = 0; j < cols; ++j) {
      auto at = [&](u32 r) { return size_t{r} * cols + j; };
      dgamma[j] = rowSum(rows, [&](u32 r) { return dy[at(r)] * xhat[at(r)]; });
      dbeta[j] = rowSum(rows, [&](u32 r) { return dy[at(r)]; });
    }
  });
}

// dgamma[c] = sum_S dy * xhat; dbeta[c] = sum_S dy
int batch_norm_bwd(void*, u32 channels, u32 spatial, const float* dy, const float* xhat,
                   const float* inv_std, const float* gamma, float* dx, float* dgamma,
                   float* dbeta) {
  return guarded([&] {
    for (size_t c = 0; c < channels; ++c) {
      const size_t off = c * spatial;
      const float g = gamma[c];
      standardizeBackward(dy + off, xhat + off, inv_std[c], [g](u32) { return g; }, spatial,
                          dx + off);
      dgamma[c] = rowSum(spatial, [&](u32 s) { return dy[off + s] * xhat[off + s]; });
      dbeta[c] = rowSum(spatial, [&](u32 s) { return dy[off + s]; });
    }
  });
}

// ---- crossEntropy (along the middle axis of [outer, n, inner]) ----------------------------------

float denominator(u32 outer, u32 inner, u32 mean) {
  return mean ? std::max(static_cast<float>(outer) * static_cast<float>(inner), 1.0f) : 1.0f;
}

// logp = logSoftmax along n; loss = -(sum over every element of target * logp) / denom, the
// products summed as one reduction over the whole tensor. Literal IEEE products: a zero weight
// on a -inf log-probability gives NaN, as the formula does.
int cross_entropy_fwd(void*, u32 outer, u32 n, u32 inner, u32 mean, const float* logits,
                      const float* target, float* loss, float* logp) {
  return guarded([&] {
    for (size_t o = 0; o < outer; ++o)
      for (size_t i = 0; i < inner; ++i) {
        const size_t off = o * n * inner + i;
        const Slice xs{logits + off, inner};
        const RowStats st = softmaxStats(xs, n);
        const float lse = flog(st.s);
        for (u32 j = 0; j < n; ++j)
          logp[off + j * size_t{inner}] = st.bad() ? kNaN : (xs[j] - st.m) - lse;
      }
    const u32 count = outer * n * inner;
    const float total = rowSum(count, [&](u32 e) { return target[e] * logp[e]; });
    *loss = -total / denominator(outer, inner, mean);
  });
}

// dlogits = dy * (softmax * T - target) / denom, T the slice's total weight;
// dtarget = -dy * logp / denom. Either output may be NULL.
int cross_entropy_bwd(void*, u32 outer, u32 n, u32 inner, u32 mean, const float* dloss,
                      const float* logp, const float* target, float* dlogits, float* dtarget) {
  return guarded([&] {
    const float dy = *dloss;
    const float denom = denominator(outer, inner, mean);
    for (size_t o = 0; o < outer; ++o)
      for (size_t i = 0; i < inner; ++i) {
        const size_t off = o * n * inner + i;
        const float t = rowSum(n, [&](u32 j) { return target[off + j * size_t{inner}]; });
        for (u32 j = 0; j < n; ++j) {
          const size_t at = off + j * size_t{inner};
          if (dlogits) dlogits[at] = dy * (fexp(logp[at]) * t - target[at]) / denom;
          if (dtarget) dtarget[at] = -dy * logp[at] / denom;
        }
      }
  });
}

const tapecheck_kernels_v1 kTable = {
    1u,
    TAPECHECK_PLUGIN_NAME,
    "1.0.0",
    0u,
    softmax_fwd,
    softmax_bwd,
    log_softmax_fwd,
    log_softmax_bwd,
    topk_mask,
    layer_norm_fwd,
    layer_norm_bwd,
    batch_norm_fwd,
    batch_norm_bwd,
    cross_entropy_fwd,
    cross_entropy_bwd,
};

}  // namespace

extern "C" __attribute__((visibility("default"))) const tapecheck_kernels_v1*
tapecheck_kernels_v1_get(void) {
  return &kTable;
}
