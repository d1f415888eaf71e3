// Distances between an actual and an expected number, in units of a format's precision.
//
// err = |actual - expected| / (unit * max(|expected|, floor))
//
// `unit` is the format's unit roundoff step (2^-23 for binary32, 2^-52 for binary64), so err is
// "how many last-place steps away", and `floor` keeps values that cancelled to nearly zero from
// being judged relative to their own tiny size (benchdnn's absolute-error fallback): callers
// pass a floor derived from the scale of the data (e.g. the largest |expected| in the row).
// Non-finite values match only in kind: NaN matches NaN, +inf matches +inf, -inf matches -inf;
// a mismatch in kind is an infinite error.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>

namespace tapecheck::conformance {

inline constexpr double kBinary32Unit = 1.0 / 8388608.0;            // 2^-23
inline constexpr double kBinary64Unit = 1.0 / 4503599627370496.0;   // 2^-52

inline bool sameNonFiniteKind(double a, double e) {
  if (std::isnan(e)) return std::isnan(a);
  if (std::isinf(e)) return std::isinf(a) && (a > 0) == (e > 0);
  return false;
}

inline double unitError(double actual, double expected, double unit, double floor) {
  if (!std::isfinite(expected) || !std::isfinite(actual))
    return sameNonFiniteKind(actual, expected) ? 0.0 : std::numeric_limits<double>::infinity();
  const double diff = std::fabs(actual - expected);
  if (diff == 0) return 0.0;
  const double scale = std::max(std::fabs(expected), floor);
  if (scale == 0) return std::numeric_limits<double>::infinity();
  return diff / (unit * scale);
}

}  // namespace tapecheck::conformance
