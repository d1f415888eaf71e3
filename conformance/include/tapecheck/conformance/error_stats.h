// Summary statistics of a list of errors, shared by run reports and certificates so that a
// certificate's p99 is the run report's p99.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace tapecheck::conformance {

// Nearest rank: the smallest value with at least 99% of the list at or below it. `sorted` is in
// ascending order; 0 for an empty list.
inline double p99OfSorted(const std::vector<double>& sorted) {
  if (sorted.empty()) return 0;
  const std::size_t n = sorted.size();
  const std::size_t rank = (99 * n + 99) / 100;  // ceil(0.99 n), >= 1
  return sorted[std::min(n, rank) - 1];
}

inline double p99(std::vector<double> errors) {
  std::sort(errors.begin(), errors.end());
  return p99OfSorted(errors);
}

}  // namespace tapecheck::conformance
