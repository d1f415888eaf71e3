// tapecheck-host-reference: a kernel ABI v1 plugin in plain C++ (no ATen, no Eigen) that
// implements docs/spec.md#operations exactly, on host memory (memory = 0). Data are float; every sum,
// mean and transcendental is computed in double and rounded to float once, at the store.
//
// It is also the source of a gallery of deliberately broken plugins. Compiled with
// -DTAPECHECK_MUTANT=<id> (an identifier of `enum Mutant` below, `-` of the gallery name written
// `_`), one mutation point switches on and introduces one bug; device/plugins/mutants.txt lists
// the gallery with the operation each mutant breaks. Compiled with -DTAPECHECK_REJECT_<KIND>
// it is one of the plugins the loader must reject. Compiled with -DTAPECHECK_PARTIAL_SOFTMAX it
// provides softmax_fwd and softmax_bwd only (a library under development); with
// -DTAPECHECK_FAULT=<id> (an identifier of `enum Fault`) one entry point misbehaves on one shape
// the way a kernel under development does: it crashes, writes past its output, returns an error
// or never returns.
//
// Build a plugin of your own the same way (see device/README.md):
//   c++ -std=c++17 -O2 -shared -fPIC -fvisibility=hidden -I<tapecheck>/device/include
//       my_kernels.cpp -o libmy-kernels.so
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numeric>
#include <thread>
#include <vector>

#include "tapecheck/kernels_v1.h"

namespace {

// ---- mutation points ----------------------------------------------------------------------------

enum Mutant {
  none,
  no_max_subtraction,                // softmax fwd: exp(x) in float without subtracting the max
  unbiased_variance,                 // layerNorm: variance divided by N - 1
  epsilon_outside_sqrt,              // batchNorm: std = sqrt(var) + eps
  topk_tie_order,                    // topKMask: equal values, the higher index wins
  skip_last_row,                     // softmax fwd: the last row is never written
  skip_last_column,                  // log-softmax fwd: the sum ignores the last column
  logsoftmax_bwd_uses_y,             // log-softmax bwd: y where exp(y) belongs
  ce_divide_by_total_weight,         // crossEntropy fwd: mean divides by sum(target)
  batchnorm_dgamma_wrong_axis,       // batchNorm bwd: dgamma = sum of dy (xhat forgotten)
  layernorm_single_centering_float,  // layerNorm: var = E[x^2] - E[x]^2 in float
  topk_nan_first,                    // topKMask: NaN ranks above every number
  softmax_bwd_missing_term,          // softmax bwd: dx = y * dy
  ce_bwd_ignores_T,                  // crossEntropy bwd: softmax - target (weights assumed to sum to 1)
  layernorm_dbeta_zero,              // layerNorm bwd: dbeta = 0
};

#ifndef TAPECHECK_MUTANT
#define TAPECHECK_MUTANT none
#endif
constexpr Mutant kMutant = TAPECHECK_MUTANT;
constexpr bool mutant(Mutant m) { return kMutant == m; }

// ---- fault points -------------------------------------------------------------------------------

enum Fault {
  no_fault,
  segfault,      // softmax_fwd: stores through a null pointer on one shape
  overrun,       // layer_norm_fwd: writes 3 floats past the end of y on one shape
  error_return,  // layer_norm_fwd: returns 3 on one shape
  hang,          // softmax_bwd: never returns on one shape
  crash_often,   // softmax_fwd: stores through a null pointer on every odd row length above 1
};

#ifndef TAPECHECK_FAULT
#define TAPECHECK_FAULT no_fault
#endif
constexpr Fault kFault = TAPECHECK_FAULT;

// The row length each fault point misbehaves on: one that the first two dozen cases of its op
// draw under seed 0 (the seed of the tests, and the default) exactly once, so that a run shows
// one failing case among passing ones: [3, 30] for softmaxLast, [5, 13] for layerNorm.
bool faultOn(Fault f, std::uint32_t cols) {
  if (kFault != f) return false;
  if (f == crash_often) return cols > 1 && cols % 2 == 1;
  return cols == ((f == segfault || f == hang) ? 30u : 13u);
}

#ifndef TAPECHECK_PLUGIN_NAME
#define TAPECHECK_PLUGIN_NAME "tapecheck-host-reference"
#endif

using u32 = std::uint32_t;
using std::size_t;

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

// A slice of n values `stride` apart: a row (stride 1) or a slice along an axis (stride inner).
struct Slice {
  const float* p;
  size_t stride;
  float operator[](size_t j) const { return p[j * stride]; }
};

// docs/spec.md's fold over the row: NaN anywhere makes the maximum NaN, so a row holding NaN turns
// all-NaN (and a row holding +inf or only -inf turns all-NaN through inf - inf).
double rowMax(Slice x, u32 n) {
  float m = x[0];
  for (u32 j = 0; j < n; ++j) {
    if (std::isnan(x[j])) return x[j];
    if (x[j] > m) m = x[j];
  }
  return m;
}

// log(sum_j exp(x_j - m)) over the first `terms` entries.
double logSumExp(Slice x, u32 terms, double m) {
  double sum = 0;
  for (u32 j = 0; j < terms; ++j) sum += std::exp(static_cast<double>(x[j]) - m);
  return std::log(sum);
}

// ---- softmax and log-softmax --------------------------------------------------------------------

// y_i = exp(x_i - m) / sum_j exp(x_j - m)
[[maybe_unused]] int softmax_fwd(void*, u32 rows, u32 cols, const float* x, float* y) {
  if (faultOn(segfault, cols) || faultOn(crash_often, cols)) {
    // Volatile on both sides, so the compiler keeps the store a real bug would make.
    volatile float* volatile nowhere = nullptr;
    *nowhere = 1.0f;
  }
  return guarded([&] {
    for (u32 r = 0; r < rows; ++r) {
      if (mutant(skip_last_row) && r + 1 == rows) continue;
      const Slice xs{x + size_t{r} * cols, 1};
      float* ys = y + size_t{r} * cols;
      if (mutant(no_max_subtraction)) {
        float sum = 0;
        for (u32 j = 0; j < cols; ++j) sum += std::exp(xs[j]);
        for (u32 j = 0; j < cols; ++j) ys[j] = std::exp(xs[j]) / sum;
        continue;
      }
      const double m = rowMax(xs, cols);
      double sum = 0;
      for (u32 j = 0; j < cols; ++j) sum += std::exp(static_cast<double>(xs[j]) - m);
      for (u32 j = 0; j < cols; ++j)
        ys[j] = static_cast<float>(std::exp(static_cast<double>(xs[j]) - m) / sum);
    }
  });
}

// dx_i = y_i * (dy_i - sum_j dy_j * y_j)
[[maybe_unused]] int softmax_bwd(void*, u32 rows, u32 cols, const float* y, const float* dy,
                                 float* dx) {
  while (faultOn(hang, cols)) std::this_thread::sleep_for(std::chrono::seconds(1));
  return guarded([&] {
    for (size_t r = 0; r < rows; ++r) {
      const float* ys = y + r * cols;
      const float* dys = dy + r * cols;
      float* dxs = dx + r * cols;
      double dot = 0;
      for (u32 j = 0; j < cols; ++j) dot += static_cast<double>(dys[j]) * ys[j];
      for (u32 j = 0; j < cols; ++j)
        dxs[j] = mutant(softmax_bwd_missing_term)
                     ? static_cast<float>(static_cast<double>(ys[j]) * dys[j])
                     : static_cast<float>(ys[j] * (static_cast<double>(dys[j]) - dot));
    }
  });
}

// y_i = (x_i - m) - log(sum_j exp(x_j - m))
[[maybe_unused]] int log_softmax_fwd(void*, u32 rows, u32 cols, const float* x, float* y) {
  return guarded([&] {
    for (size_t r = 0; r < rows; ++r) {
      const Slice xs{x + r * cols, 1};
      float* ys = y + r * cols;
      const double m = rowMax(xs, cols);
      const double lse = logSumExp(xs, mutant(skip_last_column) ? cols - 1 : cols, m);
      for (u32 j = 0; j < cols; ++j)
        ys[j] = static_cast<float>((static_cast<double>(xs[j]) - m) - lse);
    }
  });
}

// dx_i = dy_i - exp(y_i) * sum_j dy_j
[[maybe_unused]] int log_softmax_bwd(void*, u32 rows, u32 cols, const float* y, const float* dy,
                                     float* dx) {
  return guarded([&] {
    for (size_t r = 0; r < rows; ++r) {
      const float* ys = y + r * cols;
      const float* dys = dy + r * cols;
      float* dxs = dx + r * cols;
      double total = 0;
      for (u32 j = 0; j < cols; ++j) total += dys[j];
      for (u32 j = 0; j < cols; ++j) {
        const double p = mutant(logsoftmax_bwd_uses_y) ? ys[j] : std::exp(static_cast<double>(ys[j]));
        dxs[j] = static_cast<float>(dys[j] - p * total);
      }
    }
  });
}

// ---- topKMask -----------------------------------------------------------------------------------

// Larger first; equal values (-0 and +0 included) by lower index; NaN below every number, NaNs
// among themselves by index. A stable sort keeps equal keys in index order, which is the tie rule.
[[maybe_unused]] int topk_mask(void*, u32 rows, u32 cols, u32 k, const float* x, float* mask) {
  return guarded([&] {
    std::vector<u32> order(cols);
    const u32 kept = std::min(k, cols);
    for (size_t r = 0; r < rows; ++r) {
      const float* xs = x + r * cols;
      float* ms = mask + r * cols;
      std::iota(order.begin(), order.end(), u32{0});
      std::stable_sort(order.begin(), order.end(), [&](u32 i, u32 j) {
        const bool iNaN = std::isnan(xs[i]), jNaN = std::isnan(xs[j]);
        if (iNaN || jNaN) return mutant(topk_nan_first) ? iNaN && !jNaN : !iNaN && jNaN;
        if (mutant(topk_tie_order)) return xs[i] > xs[j] || (xs[i] == xs[j] && i > j);
        return xs[i] > xs[j];
      });
      std::fill(ms, ms + cols, 0.0f);
      for (u32 r2 = 0; r2 < kept; ++r2) ms[order[r2]] = 1.0f;
    }
  });
}

// ---- layerNorm and batchNorm --------------------------------------------------------------------

enum class Norm { Layer, Batch };

// Standardizes one row of n values, in the spec's order of operations, in double
// (docs/spec.md#layer-norm, docs/spec.md#batch-norm):
//   mean = (1/N) sum x; c = x - mean
//   varRaw = (1/N) sum (c - mean(c))^2 for layerNorm (centered twice), (1/N) sum c^2 for batchNorm
//   var = max(varRaw, 0) (NaN stays NaN); std = sqrt(max(var + eps, 0)); invStd = 1/std;
//   xhat = c/std
// Writes xhat (float) and returns invStd; `xhatOut` gets the unrounded xhat for y.
double standardize(Norm which, const float* x, u32 n, float eps, float* xhat,
                   std::vector<double>& xhatOut) {
  const bool layer = which == Norm::Layer;
  double sum = 0;
  for (u32 j = 0; j < n; ++j) sum += x[j];
  const double mean = sum / n;
  std::vector<double> c(n);
  double sumC = 0;
  for (u32 j = 0; j < n; ++j) sumC += c[j] = x[j] - mean;
  const double meanC = layer ? sumC / n : 0.0;
  double squares = 0;
  for (u32 j = 0; j < n; ++j) squares += (c[j] - meanC) * (c[j] - meanC);
  double varRaw = squares / ((mutant(unbiased_variance) && layer) ? n - 1.0 : double(n));
  if (mutant(layernorm_single_centering_float) && layer) {
    float m = 0, m2 = 0;
    for (u32 j = 0; j < n; ++j) {
      m += x[j];
      m2 += x[j] * x[j];
    }
    m /= static_cast<float>(n);
    m2 /= static_cast<float>(n);
    varRaw = m2 - m * m;
  }
  const double var = varRaw <= 0 ? 0.0 : varRaw;  // Lean's max: NaN <= 0 is false, NaN stays
  // The Spec's clamped square root: a d of -0 or below gives +0, NaN stays NaN.
  const double d = var + eps;
  const double stdev = (mutant(epsilon_outside_sqrt) && !layer) ? std::sqrt(var) + eps
                                                                 : std::sqrt(d <= 0 ? 0.0 : d);
  xhatOut.resize(n);
  for (u32 j = 0; j < n; ++j) {
    xhatOut[j] = c[j] / stdev;
    xhat[j] = static_cast<float>(xhatOut[j]);
  }
  return 1.0 / stdev;
}

// y = xhat * gamma + beta (gamma, beta indexed by column)
[[maybe_unused]] int layer_norm_fwd(void*, u32 rows, u32 cols, float eps, const float* x,
                                    const float* gamma, const float* beta, float* y, float* xhat,
                                    float* inv_std) {
  if (faultOn(error_return, cols)) return 3;
  return guarded([&] {
    std::vector<double> xh;
    for (size_t r = 0; r < rows; ++r) {
      const size_t off = r * cols;
      inv_std[r] = static_cast<float>(standardize(Norm::Layer, x + off, cols, eps, xhat + off, xh));
      for (u32 j = 0; j < cols; ++j)
        y[off + j] = static_cast<float>(xh[j] * gamma[j] + beta[j]);
    }
    if (faultOn(overrun, cols))
      for (size_t i = 0; i < 3; ++i) y[size_t{rows} * cols + i] = 0.0f;
  });
}

// y = xhat * gamma[c] + beta[c] over the channel's S values
[[maybe_unused]] int batch_norm_fwd(void*, u32 channels, u32 spatial, float eps, const float* x,
                                    const float* gamma, const float* beta, float* y, float* xhat,
                                    float* inv_std) {
  return guarded([&] {
    std::vector<double> xh;
    for (size_t c = 0; c < channels; ++c) {
      const size_t off = c * spatial;
      inv_std[c] =
          static_cast<float>(standardize(Norm::Batch, x + off, spatial, eps, xhat + off, xh));
      for (u32 s = 0; s < spatial; ++s)
        y[off + s] = static_cast<float>(xh[s] * gamma[c] + beta[c]);
    }
  });
}

// dx = invStd * (g - mean(g) - xhat * mean(g * xhat)) for one row, g = dy * gamma.
void standardizeBackward(const float* dy, const float* xhat, double invStd,
                         const std::vector<double>& gammaOf, u32 n, float* dx) {
  double sumG = 0, sumGX = 0;
  for (u32 j = 0; j < n; ++j) {
    const double g = dy[j] * gammaOf[j];
    sumG += g;
    sumGX += g * xhat[j];
  }
  const double meanG = sumG / n, meanGX = sumGX / n;
  for (u32 j = 0; j < n; ++j)
    dx[j] = static_cast<float>(invStd * (dy[j] * gammaOf[j] - meanG - xhat[j] * meanGX));
}

// dgamma = sum over rows of dy * xhat; dbeta = sum over rows of dy
[[maybe_unused]] int layer_norm_bwd(void*, u32 rows, u32 cols, const float* dy, const float* xhat,
                                    const float* inv_std, const float* gamma, float* dx,
                                    float* dgamma, float* dbeta) {
  return guarded([&] {
    const std::vector<double> g(gamma, gamma + cols);
    std::vector<double> sumDyXhat(cols, 0.0), sumDy(cols, 0.0);
    for (size_t r = 0; r < rows; ++r) {
      const size_t off = r * cols;
      standardizeBackward(dy + off, xhat + off, inv_std[r], g, cols, dx + off);
      for (u32 j = 0; j < cols; ++j) {
        sumDyXhat[j] += static_cast<double>(dy[off + j]) * xhat[off + j];
        sumDy[j] += dy[off + j];
      }
    }
    for (u32 j = 0; j < cols; ++j) {
      dgamma[j] = static_cast<float>(sumDyXhat[j]);
      dbeta[j] = mutant(layernorm_dbeta_zero) ? 0.0f : static_cast<float>(sumDy[j]);
    }
  });
}

// dgamma[c] = sum_S dy * xhat; dbeta[c] = sum_S dy
[[maybe_unused]] int batch_norm_bwd(void*, u32 channels, u32 spatial, const float* dy,
                                    const float* xhat, const float* inv_std, const float* gamma,
                                    float* dx, float* dgamma, float* dbeta) {
  return guarded([&] {
    std::vector<double> g(spatial);
    for (size_t c = 0; c < channels; ++c) {
      const size_t off = c * spatial;
      std::fill(g.begin(), g.end(), static_cast<double>(gamma[c]));
      standardizeBackward(dy + off, xhat + off, inv_std[c], g, spatial, dx + off);
      double sumDyXhat = 0, sumDy = 0;
      for (u32 s = 0; s < spatial; ++s) {
        sumDyXhat += mutant(batchnorm_dgamma_wrong_axis)
                         ? dy[off + s]
                         : static_cast<double>(dy[off + s]) * xhat[off + s];
        sumDy += dy[off + s];
      }
      dgamma[c] = static_cast<float>(sumDyXhat);
      dbeta[c] = static_cast<float>(sumDy);
    }
  });
}

// ---- crossEntropy (along the middle axis of [outer, n, inner]) ----------------------------------

double denominator(u32 outer, u32 inner, u32 mean) {
  const double slices = static_cast<double>(outer) * inner;
  return mean ? std::max(slices, 1.0) : 1.0;
}

template <class Visit>
void forEachSlice(u32 outer, u32 n, u32 inner, Visit&& visit) {
  for (size_t o = 0; o < outer; ++o)
    for (size_t i = 0; i < inner; ++i) visit(o * n * inner + i);
}

// logp = logSoftmax along n; loss = -(sum over all elements of target * logp) / denom.
// Literal IEEE products: a zero weight on a -inf log-probability gives NaN, as the formula does.
[[maybe_unused]] int cross_entropy_fwd(void*, u32 outer, u32 n, u32 inner, u32 mean,
                                       const float* logits, const float* target, float* loss,
                                       float* logp) {
  return guarded([&] {
    double total = 0, weight = 0;
    forEachSlice(outer, n, inner, [&](size_t off) {
      const Slice xs{logits + off, inner};
      const double m = rowMax(xs, n);
      const double lse = logSumExp(xs, n, m);
      for (u32 j = 0; j < n; ++j) {
        const double lp = (static_cast<double>(xs[j]) - m) - lse;
        logp[off + j * size_t{inner}] = static_cast<float>(lp);
        total += static_cast<double>(target[off + j * size_t{inner}]) * lp;
        weight += target[off + j * size_t{inner}];
      }
    });
    const double denom =
        (mutant(ce_divide_by_total_weight) && mean) ? weight : denominator(outer, inner, mean);
    *loss = static_cast<float>(-total / denom);
  });
}

// dlogits = dy * (softmax * T - target) / denom, T the slice's total weight;
// dtarget = -dy * logp / denom. Either output may be NULL.
[[maybe_unused]] int cross_entropy_bwd(void*, u32 outer, u32 n, u32 inner, u32 mean,
                                       const float* dloss, const float* logp,
                                       const float* target, float* dlogits, float* dtarget) {
  return guarded([&] {
    const double dy = *dloss;
    const double denom = denominator(outer, inner, mean);
    forEachSlice(outer, n, inner, [&](size_t off) {
      double t = 0;
      for (u32 j = 0; j < n; ++j) t += target[off + j * size_t{inner}];
      for (u32 j = 0; j < n; ++j) {
        const size_t at = off + j * size_t{inner};
        const double p = std::exp(static_cast<double>(logp[at]));
        if (dlogits)
          dlogits[at] = static_cast<float>(
              dy * ((mutant(ce_bwd_ignores_T) ? p : p * t) - target[at]) / denom);
        if (dtarget) dtarget[at] = static_cast<float>(-dy * logp[at] / denom);
      }
    });
  });
}

// ---- the table ----------------------------------------------------------------------------------

// Which entry points the table provides: every one, none (a table the loader must refuse), or the
// softmax pair alone (a partial table).
#if defined(TAPECHECK_REJECT_NO_ENTRIES)
#define TAPECHECK_ENTRY(f) nullptr
#define TAPECHECK_SOFTMAX_ENTRY(f) nullptr
#elif defined(TAPECHECK_PARTIAL_SOFTMAX)
#define TAPECHECK_ENTRY(f) nullptr
#define TAPECHECK_SOFTMAX_ENTRY(f) f
#else
#define TAPECHECK_ENTRY(f) f
#define TAPECHECK_SOFTMAX_ENTRY(f) f
#endif

const tapecheck_kernels_v1 kTable = {
#ifdef TAPECHECK_REJECT_ABI_V2
    2u,
#else
    1u,
#endif
    TAPECHECK_PLUGIN_NAME,
    "1.0.0",
#ifdef TAPECHECK_REJECT_MEMORY_CUDA
    1u,
#else
    0u,
#endif
    TAPECHECK_SOFTMAX_ENTRY(softmax_fwd),
    TAPECHECK_SOFTMAX_ENTRY(softmax_bwd),
    TAPECHECK_ENTRY(log_softmax_fwd),
    TAPECHECK_ENTRY(log_softmax_bwd),
    TAPECHECK_ENTRY(topk_mask),
    TAPECHECK_ENTRY(layer_norm_fwd),
    TAPECHECK_ENTRY(layer_norm_bwd),
    TAPECHECK_ENTRY(batch_norm_fwd),
    TAPECHECK_ENTRY(batch_norm_bwd),
    TAPECHECK_ENTRY(cross_entropy_fwd),
    TAPECHECK_ENTRY(cross_entropy_bwd),
};

}  // namespace

// The one exported symbol (the plugins are built with hidden visibility). The rejection plugin
// "no symbol" exports nothing at all.
#ifndef TAPECHECK_REJECT_NO_SYMBOL
extern "C" __attribute__((visibility("default"))) const tapecheck_kernels_v1*
tapecheck_kernels_v1_get(void) {
  return &kTable;
}
#else
extern "C" const tapecheck_kernels_v1* tapecheck_host_reference_table_hidden(void) {
  return &kTable;
}
#endif
