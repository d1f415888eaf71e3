// report.html: one self-contained page a person reads (no script, no network, no external
// file): the verdict first, every reason, what was certified, the comparison with a baseline, a
// table and an error histogram (inline SVG, log2 bins of ulps) per op and pass, and the failing
// cases with the command lines that reproduce them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tapecheck/certify/certificate.h"

namespace tapecheck::certify {

// Text into HTML content or a quoted attribute: & < > " ' are escaped; invalid UTF-8 and control
// characters other than tab, newline and carriage return become U+FFFD.
std::string htmlEscape(std::string_view text);

// The histogram's bins: bin 0 holds exact zeros, bin 1 errors below 2^kFirstBinExponent, bin k
// (k >= 2) errors in [2^(kFirstBinExponent + k - 2), 2^(kFirstBinExponent + k - 1)), up to the
// largest finite error; non-finite errors are counted apart.
inline constexpr int kFirstBinExponent = -3;
struct Histogram {
  std::vector<std::uint64_t> bins;
  std::uint64_t nonFinite = 0;
};
Histogram histogramOf(const std::vector<double>& errorsUlps);

// An <svg> element drawing `errorsUlps` with the budget marked (none when budget <= 0). The part
// of each bar that holds errors of failing cases (`failedErrorsUlps`, among `errorsUlps`) is
// red, whatever the budget says (a budget of 0 leaves the verdict to the pass's own criterion);
// the rest of a bar is red when the whole bin lies past a nonzero budget, else blue. At most
// kMaxHistogramWidth pixels wide, however many bins: two fit side by side on the page.
inline constexpr double kMaxHistogramWidth = 540;
std::string svgHistogram(const std::vector<double>& errorsUlps, double budgetUlps,
                         const std::string& caption,
                         const std::vector<double>& failedErrorsUlps = {});

std::string renderHtmlReport(const Certificate& cert);

}  // namespace tapecheck::certify
