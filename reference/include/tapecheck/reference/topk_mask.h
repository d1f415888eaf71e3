// topKMask per row (Spec.MoE.topKMaskSpec as docs/spec.md restates it): larger first, equal values
// by lower index, NaN below every number and NaNs among themselves by index.
#pragma once

#include <algorithm>
#include <numeric>
#include <vector>

#include "tapecheck/reference/softmax.h"

namespace tapecheck::reference {

template <class Scalar>
Vec<Scalar> topkMask(const RowFold& f, std::uint32_t k, const Vec<Scalar>& x) {
  const AxisFold a{f.rows, f.cols, 1};
  Vec<Scalar> mask = Vec<Scalar>::Zero(x.size());
  std::vector<std::size_t> order(f.cols);
  forEachSlice(a, [&](std::size_t off) {
    auto xs = slice(x, a, off);
    std::iota(order.begin(), order.end(), std::size_t{0});
    // "a ranks before b": a is a number and b is NaN, or both numbers and a > b. A stable
    // sort keeps equal keys (ties, and NaNs) in index order, which is the tie rule.
    std::stable_sort(order.begin(), order.end(), [&](std::size_t i, std::size_t j) {
      const bool iNaN = ScalarTraits<Scalar>::isNaN(xs(i));
      const bool jNaN = ScalarTraits<Scalar>::isNaN(xs(j));
      if (iNaN || jNaN) return !iNaN && jNaN;
      return xs(i) > xs(j);
    });
    auto out = slice(mask, a, off);
    for (std::uint32_t r = 0; r < k && r < f.cols; ++r) out(order[r]) = Scalar(1);
  });
  return mask;
}

}  // namespace tapecheck::reference
