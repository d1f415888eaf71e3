#include "values.h"

namespace tapecheck::conformance::values {
namespace {

std::size_t countOf(const AxisFold& f) {
  return static_cast<std::size_t>(f.outer) * f.n * f.inner;
}

double signedMagnitude(Rng& rng, double lo, double hi) {
  const double m = rng.uniform(lo, hi);
  return rng.chance(0.5) ? m : -m;
}

}  // namespace

std::vector<double> fill(Fill kind, const AxisFold& fold, Rng& rng) {
  std::vector<double> v(countOf(fold), 0.0);
  std::size_t slice = 0;
  forEachSliceIndices(fold, [&](const std::vector<std::size_t>& idx) {
    const bool first = slice++ == 0;
    switch (kind) {
      case Fill::Normal:
        for (std::size_t i : idx) v[i] = 3.0 * rng.normal();
        break;
      case Fill::MeanShifted: {
        // |mean| / spread up to 2e4: binary32 keeps ~9 bits of the spread, enough for a
        // two-pass mean/variance; E[x^2] - E[x]^2 loses everything (pytorch#51102).
        const double mean = signedMagnitude(rng, 1e3, 1e4);
        const double spread = rng.uniform(0.5, 4.0);
        for (std::size_t i : idx) v[i] = mean + spread * rng.normal();
        break;
      }
      case Fill::NearExpOverflow:
        // exp(x) overflows binary32 above ~88.72: a softmax that does not subtract the row
        // maximum turns these into inf/inf.
        for (std::size_t i : idx) v[i] = 88.5 + rng.uniform(-3.0, 0.6);
        break;
      case Fill::VeryNegative:
        if (rng.chance(0.3)) {
          // A whole slice around -1e7 (integers are exact there): exp without the shift is 0/0.
          for (std::size_t i : idx) v[i] = -1e7 + static_cast<double>(rng.below(7)) - 3.0;
        } else {
          for (std::size_t i : idx) v[i] = rng.chance(0.5) ? -1e7 : 3.0 * rng.normal();
        }
        break;
      case Fill::IntegerTies:
        for (std::size_t i : idx) v[i] = static_cast<double>(rng.below(5)) - 2.0;
        break;
      case Fill::NonFinite: {  // per slice: clean, -inf, NaN, +inf, all -inf, -inf and NaN
        for (std::size_t i : idx) v[i] = 3.0 * rng.normal();
        // The first slice always holds a NaN among -inf entries (NaN must rank below -inf).
        const std::uint64_t which = first ? 19 : rng.below(20);
        const std::size_t at = static_cast<std::size_t>(rng.below(idx.size()));
        if (which < 5) {
          // clean slice
        } else if (which < 11) {
          for (std::size_t i : idx)
            if (rng.chance(0.3)) v[i] = -kInf;
        } else if (which < 14) {
          v[idx[at]] = kNaN;
        } else if (which < 16) {
          v[idx[at]] = kInf;
        } else if (which < 18) {
          for (std::size_t i : idx) v[i] = -kInf;
        } else {
          for (std::size_t i : idx)
            if (rng.chance(0.3)) v[i] = -kInf;
          v[idx[at]] = kNaN;
        }
        break;
      }
      case Fill::AllEqual: {
        const double c = 3.0 * rng.normal();
        for (std::size_t i : idx) v[i] = c;
        break;
      }
      case Fill::EpsDominated:
        for (std::size_t i : idx) v[i] = 1e-3 * rng.normal();
        break;
      case Fill::ConstantChannels: {
        const double c = 3.0 * rng.normal();
        const bool constant = rng.chance(0.5);
        for (std::size_t i : idx) v[i] = constant ? c : c + rng.normal();
        break;
      }
    }
  });
  for (double& x : v) x = toFloat(x);
  return v;
}

std::vector<double> fillTarget(TargetFill kind, const AxisFold& fold, Rng& rng) {
  std::vector<double> v(countOf(fold), 0.0);
  forEachSliceIndices(fold, [&](const std::vector<std::size_t>& idx) {
    switch (kind) {
      case TargetFill::Weights:
        for (std::size_t i : idx) v[i] = rng.uniform(0.0, 2.0);
        break;
      case TargetFill::OneHot:
        v[idx[static_cast<std::size_t>(rng.below(idx.size()))]] = 1.0;
        break;
      case TargetFill::Sparse:
        for (std::size_t i : idx)
          if (rng.chance(0.2)) v[i] = rng.uniform(0.0, 3.0);
        break;
      case TargetFill::Distribution: {
        double total = 0;
        for (std::size_t i : idx) total += (v[i] = rng.uniform(0.0, 1.0));
        if (total > 0)
          for (std::size_t i : idx) v[i] /= total;
        break;
      }
    }
  });
  for (double& x : v) x = toFloat(x);
  return v;
}

std::vector<double> gammaValues(std::size_t n, Rng& rng) {
  std::vector<double> v(n);
  for (double& x : v) x = toFloat(1.0 + 0.5 * rng.normal());
  return v;
}

std::vector<double> betaValues(std::size_t n, Rng& rng) {
  std::vector<double> v(n);
  for (double& x : v) x = toFloat(0.5 * rng.normal());
  return v;
}

std::vector<double> upstreamValues(std::size_t n, Rng& rng) {
  std::vector<double> v(n);
  for (double& x : v) x = toFloat(rng.normal());
  return v;
}

}  // namespace tapecheck::conformance::values
