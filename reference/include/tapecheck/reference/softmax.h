// Softmax and log-softmax along an axis (outer x n x inner, stride inner), docs/spec.md#operations.
// Rows of a last-axis operation are the case inner = 1.
#pragma once

#include <Eigen/Core>

#include "tapecheck/reference/scalar.h"
#include "tapecheck/shape.h"

namespace tapecheck::reference {

template <class Scalar>
using Vec = Eigen::Matrix<Scalar, Eigen::Dynamic, 1>;

template <class Scalar>
using Slice = Eigen::Map<Vec<Scalar>, 0, Eigen::InnerStride<>>;
template <class Scalar>
using ConstSlice = Eigen::Map<const Vec<Scalar>, 0, Eigen::InnerStride<>>;

// Visits the outer*inner slices of length n; f(sliceOffset) gets the first element's offset.
template <class F>
void forEachSlice(const AxisFold& f, F&& visit) {
  for (std::size_t o = 0; o < f.outer; ++o)
    for (std::size_t i = 0; i < f.inner; ++i)
      visit(o * std::size_t{f.n} * f.inner + i);
}

template <class Scalar>
ConstSlice<Scalar> slice(const Vec<Scalar>& v, const AxisFold& f, std::size_t offset) {
  return ConstSlice<Scalar>(v.data() + offset, f.n, Eigen::InnerStride<>(f.inner));
}
template <class Scalar>
Slice<Scalar> slice(Vec<Scalar>& v, const AxisFold& f, std::size_t offset) {
  return Slice<Scalar>(v.data() + offset, f.n, Eigen::InnerStride<>(f.inner));
}

// The spec's fold over the row: NaN anywhere makes the maximum NaN (Eigen's maxCoeff would
// skip it), so a row holding NaN becomes all-NaN as docs/spec.md requires.
template <class Scalar, class Row>
Scalar rowMax(const Row& x) {
  Scalar m = x(0);
  for (Eigen::Index j = 0; j < x.size(); ++j) {
    if (ScalarTraits<Scalar>::isNaN(x(j))) return x(j);
    if (x(j) > m) m = x(j);
  }
  return m;
}

// y_i = exp(x_i - m) / sum_j exp(x_j - m)
template <class Scalar>
Vec<Scalar> softmaxAxis(const AxisFold& f, const Vec<Scalar>& x) {
  Vec<Scalar> y(x.size());
  forEachSlice(f, [&](std::size_t off) {
    auto xs = slice(x, f, off);
    const Scalar m = rowMax<Scalar>(xs);
    const Vec<Scalar> e = (xs.array() - m).exp().matrix();
    const Scalar sum = e.sum();
    slice(y, f, off) = (e.array() / sum).matrix();
  });
  return y;
}

// y_i = (x_i - m) - log(sum_j exp(x_j - m))
template <class Scalar>
Vec<Scalar> logSoftmaxAxis(const AxisFold& f, const Vec<Scalar>& x) {
  using std::log;
  Vec<Scalar> y(x.size());
  forEachSlice(f, [&](std::size_t off) {
    auto xs = slice(x, f, off);
    const Scalar m = rowMax<Scalar>(xs);
    const Vec<Scalar> shifted = (xs.array() - m).matrix();
    const Scalar logSum = log(Scalar(shifted.array().exp().sum()));
    slice(y, f, off) = (shifted.array() - logSum).matrix();
  });
  return y;
}

// dx_i = y_i * (dy_i - sum_j dy_j * y_j)
template <class Scalar>
Vec<Scalar> softmaxBackward(const RowFold& f, const Vec<Scalar>& y, const Vec<Scalar>& dy) {
  const AxisFold a{f.rows, f.cols, 1};
  Vec<Scalar> dx(y.size());
  forEachSlice(a, [&](std::size_t off) {
    auto ys = slice(y, a, off);
    auto dys = slice(dy, a, off);
    const Scalar dot = dys.cwiseProduct(ys).sum();
    slice(dx, a, off) = (ys.array() * (dys.array() - dot)).matrix();
  });
  return dx;
}

// dx_i = dy_i - exp(y_i) * sum_j dy_j
template <class Scalar>
Vec<Scalar> logSoftmaxBackward(const RowFold& f, const Vec<Scalar>& y, const Vec<Scalar>& dy) {
  const AxisFold a{f.rows, f.cols, 1};
  Vec<Scalar> dx(y.size());
  forEachSlice(a, [&](std::size_t off) {
    auto ys = slice(y, a, off);
    auto dys = slice(dy, a, off);
    const Scalar total = dys.sum();
    slice(dx, a, off) = (dys.array() - ys.array().exp() * total).matrix();
  });
  return dx;
}

}  // namespace tapecheck::reference
