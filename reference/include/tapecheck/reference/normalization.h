// layerNorm and batchNorm, docs/spec.md#operations. Both standardize rows of a [rows, cols] view
// (layerNorm: a row per sequence position; batchNorm: a row per channel holding its S values);
// they differ only in whether gamma/beta index the column or the row.
#pragma once

#include <cmath>

#include "tapecheck/backend.h"
#include "tapecheck/reference/softmax.h"

namespace tapecheck::reference {

template <class Scalar>
struct Standardized {
  Vec<Scalar> xhat;
  Vec<Scalar> invStd;  // one per row
};

// Per row, in the spec's own order of operations (docs/spec.md#layer-norm,
// docs/spec.md#batch-norm):
//   mean = (1/N) sum x;  c = x - mean
//   varRaw = (1/N) sum (c - mean(c))^2   layerNorm: the Spec centers a second time
//   varRaw = (1/N) sum c^2               batchNorm: centered once
//   var = max(varRaw, 0);  std = sqrt(max(var + epsilon, 0));  invStd = 1/std;  xhat = c / std
// epsilon is the caller's binary64 value, converted exactly at the oracle's precision.
template <class Scalar>
Standardized<Scalar> standardizeRows(const RowFold& f, double epsilon, const Vec<Scalar>& x,
                                     bool centerTwice) {
  using std::sqrt;
  const AxisFold a{f.rows, f.cols, 1};
  const Scalar n = ScalarTraits<Scalar>::fromDouble(f.cols);
  const Scalar eps = ScalarTraits<Scalar>::fromDouble(epsilon);
  const Scalar zero = ScalarTraits<Scalar>::fromDouble(0.0);
  const Scalar one = ScalarTraits<Scalar>::fromDouble(1.0);
  Standardized<Scalar> out{Vec<Scalar>(x.size()), Vec<Scalar>(f.rows)};
  std::size_t row = 0;
  forEachSlice(a, [&](std::size_t off) {
    auto xs = slice(x, a, off);
    const Scalar mean = xs.sum() / n;
    const Vec<Scalar> c = (xs.array() - mean).matrix();
    const Scalar meanC = centerTwice ? Scalar(c.sum() / n) : zero;
    const Scalar varRaw = centerTwice ? Scalar((c.array() - meanC).square().sum() / n)
                                      : Scalar(c.array().square().sum() / n);
    // max(varRaw, 0) and sqrtSpec's max(d, 0) as Lean's `max a b = if a <= b then b else a`:
    // NaN stays NaN, and a d of -0 or below gives +0 (docs/spec.md#clamped-sqrt).
    const Scalar var = varRaw <= zero ? zero : varRaw;
    const Scalar d = var + eps;
    const Scalar stdev = sqrt(d <= zero ? zero : d);
    out.invStd(row++) = one / stdev;
    slice(out.xhat, a, off) = (c.array() / stdev).matrix();
  });
  return out;
}

// dx = invStd * (g - mean_row(g) - xhat * mean_row(g * xhat)), per row.
template <class Scalar>
Vec<Scalar> standardizeBackward(const RowFold& f, const Vec<Scalar>& g, const Vec<Scalar>& xhat,
                                const Vec<Scalar>& invStd) {
  const AxisFold a{f.rows, f.cols, 1};
  const Scalar n = ScalarTraits<Scalar>::fromDouble(f.cols);
  Vec<Scalar> dx(g.size());
  std::size_t row = 0;
  forEachSlice(a, [&](std::size_t off) {
    auto gs = slice(g, a, off);
    auto xs = slice(xhat, a, off);
    const Scalar meanG = gs.sum() / n;
    const Scalar meanGX = gs.cwiseProduct(xs).sum() / n;
    const Scalar inv = invStd(row++);
    slice(dx, a, off) = (inv * (gs.array() - meanG - xs.array() * meanGX)).matrix();
  });
  return dx;
}

template <class Scalar>
using RowMajor = Eigen::Map<const Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic,
                                                Eigen::RowMajor>>;

template <class Scalar>
RowMajor<Scalar> asMatrix(const Vec<Scalar>& v, const RowFold& f) {
  return RowMajor<Scalar>(v.data(), f.rows, f.cols);
}

// y = xhat * gamma + beta, gamma and beta indexed by column.
template <class Scalar>
NormForward<Vec<Scalar>> layerNormForward(const RowFold& f, double epsilon, const Vec<Scalar>& x,
                                          const Vec<Scalar>& gamma, const Vec<Scalar>& beta) {
  Standardized<Scalar> s = standardizeRows(f, epsilon, x, /*centerTwice=*/true);
  Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> y =
      asMatrix(s.xhat, f);
  for (Eigen::Index r = 0; r < y.rows(); ++r)
    y.row(r) = (y.row(r).array() * gamma.transpose().array() + beta.transpose().array()).matrix();
  return {Eigen::Map<Vec<Scalar>>(y.data(), y.size()), std::move(s.xhat), std::move(s.invStd)};
}

// g = dy * gamma;  dgamma = sum over rows of dy * xhat;  dbeta = sum over rows of dy.
template <class Scalar>
NormBackward<Vec<Scalar>> layerNormBackward(const RowFold& f, const Vec<Scalar>& dy,
                                            const Vec<Scalar>& xhat, const Vec<Scalar>& invStd,
                                            const Vec<Scalar>& gamma) {
  const auto dyM = asMatrix(dy, f);
  const auto xhatM = asMatrix(xhat, f);
  Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> g = dyM;
  for (Eigen::Index r = 0; r < g.rows(); ++r)
    g.row(r) = g.row(r).cwiseProduct(gamma.transpose());
  const Vec<Scalar> gFlat = Eigen::Map<Vec<Scalar>>(g.data(), g.size());
  NormBackward<Vec<Scalar>> out;
  out.dx = standardizeBackward(f, gFlat, xhat, invStd);
  out.dgamma = dyM.cwiseProduct(xhatM).colwise().sum().transpose();
  out.dbeta = dyM.colwise().sum().transpose();
  return out;
}

// y = xhat * gamma[c] + beta[c] for the S values of channel c.
template <class Scalar>
NormForward<Vec<Scalar>> batchNormForward(const RowFold& f, double epsilon, const Vec<Scalar>& x,
                                          const Vec<Scalar>& gamma, const Vec<Scalar>& beta) {
  Standardized<Scalar> s = standardizeRows(f, epsilon, x, /*centerTwice=*/false);
  Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> y =
      asMatrix(s.xhat, f);
  for (Eigen::Index c = 0; c < y.rows(); ++c)
    y.row(c) = (y.row(c).array() * gamma(c) + beta(c)).matrix();
  return {Eigen::Map<Vec<Scalar>>(y.data(), y.size()), std::move(s.xhat), std::move(s.invStd)};
}

// g = dy * gamma[c];  dgamma[c] = sum_S dy * xhat;  dbeta[c] = sum_S dy.
template <class Scalar>
NormBackward<Vec<Scalar>> batchNormBackward(const RowFold& f, const Vec<Scalar>& dy,
                                            const Vec<Scalar>& xhat, const Vec<Scalar>& invStd,
                                            const Vec<Scalar>& gamma) {
  const auto dyM = asMatrix(dy, f);
  const auto xhatM = asMatrix(xhat, f);
  Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> g = dyM;
  for (Eigen::Index c = 0; c < g.rows(); ++c) g.row(c) *= gamma(c);
  const Vec<Scalar> gFlat = Eigen::Map<Vec<Scalar>>(g.data(), g.size());
  NormBackward<Vec<Scalar>> out;
  out.dx = standardizeBackward(f, gFlat, xhat, invStd);
  out.dgamma = dyM.cwiseProduct(xhatM).rowwise().sum();
  out.dbeta = dyM.rowwise().sum();
  return out;
}

}  // namespace tapecheck::reference
