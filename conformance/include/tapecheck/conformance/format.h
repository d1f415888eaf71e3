// How numbers are printed in every report: the judge's reasons, `tapecheck run`'s report,
// golden-vector reports and certificates. Each format is named for what it prints; reports keep
// their format because their text is compared byte for byte. Header-only, so that certification
// can use it without linking the conformance library.
#pragma once

#include <cmath>
#include <cstdio>
#include <string>

namespace tapecheck::conformance {

// An error or a budget in units of a format's precision: "12.3ulp", "1.23e+05ulp" from 10^4,
// "inf" (the judge's reasons, `tapecheck run`'s report).
inline std::string formatUlps(double ulps) {
  if (!std::isfinite(ulps)) return "inf";
  char buf[32];
  if (ulps < 1e4)
    std::snprintf(buf, sizeof buf, "%.1fulp", ulps);
  else
    std::snprintf(buf, sizeof buf, "%.2eulp", ulps);
  return buf;
}

// A figure with `digits` significant digits (%g): "12", "3.5", "1.235e+04", "nan", "inf",
// "-inf". Golden-vector reports print distances with 3.
inline std::string formatSignificant(double v, int digits) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

// A figure in a certificate's reasons and report (errors, budgets, factors, percentages): four
// significant digits.
inline std::string formatFigure(double v) { return formatSignificant(v, 4); }

// A value in a verdict's reason: "%.9g" (every binary32 exactly, "nan", "inf").
inline std::string formatNumber(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

// A binary64 value exactly: "%.17g" (golden-vector reports).
inline std::string formatExact(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

}  // namespace tapecheck::conformance
