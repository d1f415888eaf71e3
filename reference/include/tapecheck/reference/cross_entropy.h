// Weighted logits cross-entropy along an axis, docs/spec.md#operations (distill reuses it with
// target = softmax(teacher)).
#pragma once

#include <algorithm>
#include <cmath>

#include "tapecheck/backend.h"
#include "tapecheck/reference/softmax.h"

namespace tapecheck::reference {

// denom = mean ? max(slices, 1) : 1, with slices = outer * inner.
template <class Scalar>
Scalar crossEntropyDenominator(const AxisFold& f, bool mean) {
  const double slices = static_cast<double>(f.outer) * static_cast<double>(f.inner);
  return ScalarTraits<Scalar>::fromDouble(mean ? std::max(slices, 1.0) : 1.0);
}

// logp = logSoftmax along axis;  loss = -(sum over all elements of target * logp) / denom.
// Literal IEEE arithmetic: a zero weight on a -inf log-probability gives NaN, as the formula does.
// The sum is the Spec's sumSpec, a fold from +0 in row-major order (docs/spec.md#zero-seeded-sum):
// a zero total is +0 and the loss -0.0, which Eigen's sum() (seeded with the first term, so a
// sum of -0 products stays -0) would not give.
template <class Scalar>
CrossEntropyForward<Vec<Scalar>> crossEntropyForward(const AxisFold& f, bool mean,
                                                     const Vec<Scalar>& logits,
                                                     const Vec<Scalar>& target) {
  CrossEntropyForward<Vec<Scalar>> out;
  out.logp = logSoftmaxAxis(f, logits);
  Scalar total = ScalarTraits<Scalar>::fromDouble(0.0);
  for (Eigen::Index i = 0; i < target.size(); ++i) total += target(i) * out.logp(i);
  out.loss = Vec<Scalar>(1);
  out.loss(0) = -total / crossEntropyDenominator<Scalar>(f, mean);
  return out;
}

// dlogits = dy * (softmax(logits) * T - target) / denom, T the slice's total weight;
// dtarget = -dy * logp / denom. softmax(logits) is exp(logp), the saved log-probabilities.
template <class Scalar>
CrossEntropyBackward<Vec<Scalar>> crossEntropyBackward(const AxisFold& f, bool mean,
                                                       const Vec<Scalar>& dloss,
                                                       const Vec<Scalar>& logp,
                                                       const Vec<Scalar>& target) {
  const Scalar denom = crossEntropyDenominator<Scalar>(f, mean);
  const Scalar dy = dloss(0);
  CrossEntropyBackward<Vec<Scalar>> out{Vec<Scalar>(logp.size()), Vec<Scalar>(logp.size())};
  forEachSlice(f, [&](std::size_t off) {
    auto lp = slice(logp, f, off);
    auto t = slice(target, f, off);
    const Scalar total = t.sum();
    slice(out.dlogits, f, off) = (dy * (lp.array().exp() * total - t.array()) / denom).matrix();
  });
  out.dtarget = (-dy * logp.array() / denom).matrix();
  return out;
}

}  // namespace tapecheck::reference
