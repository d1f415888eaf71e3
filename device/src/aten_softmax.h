// ATen's softmax and log-softmax with docs/spec.md's outcome for non-finite rows imposed (internal to
// the device library: the `aten` kernel table and distill's teacher use it).
//
// docs/spec.md#operations: a row holding NaN, +inf, or only -inf is all NaN. ATen documents no such
// rule (its CPU kernels happen to give it through a NaN-propagating max; GPU kernels are free to
// use fmaxf, which drops NaN), so the rows are found explicitly and overwritten with NaN.
// -inf entries next to a finite maximum are left to ATen (0 and -inf, as docs/spec.md says).
#pragma once

#include <cstdint>
#include <limits>

#include <ATen/ATen.h>

namespace tapecheck::device::detail {

// True (keepdim) for every slice along `dim` that docs/spec.md makes all-NaN.
inline at::Tensor nonFiniteSlices(const at::Tensor& x, std::int64_t dim) {
  const at::Tensor poisoned = at::logical_or(at::isnan(x), at::isposinf(x)).any(dim, true);
  const at::Tensor allNegInf = at::isneginf(x).all(dim, true);
  return at::logical_or(poisoned, allNegInf);
}

inline at::Tensor specSoftmax(const at::Tensor& x, std::int64_t dim) {
  return at::softmax(x, dim).masked_fill(nonFiniteSlices(x, dim),
                                         std::numeric_limits<float>::quiet_NaN());
}

inline at::Tensor specLogSoftmax(const at::Tensor& x, std::int64_t dim) {
  return at::log_softmax(x, dim).masked_fill(nonFiniteSlices(x, dim),
                                             std::numeric_limits<float>::quiet_NaN());
}

}  // namespace tapecheck::device::detail
