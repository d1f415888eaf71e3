#include "tapecheck/conformance/epsilon_abi.h"

#include <cmath>
#include <cstddef>

#include "tapecheck/reference/scalar.h"
#include "tapecheck/tape.h"

namespace tapecheck::conformance {
namespace {

using reference::Multi;

// The largest relative change of std that still judges a case against the oracle at epsilon:
// half of binary32's unit roundoff, the most that rounding a positive normal epsilon can change
// std by (docs/spec.md#epsilon-binary32, case 2).
constexpr double kSafeRelativeChange = 0x1p-25;

struct Rows {
  std::size_t rows = 0, cols = 0;
};

// The [rows, cols] view of x that the operation standardizes; rows = 0 when the case cannot be
// read that way.
Rows rowsOf(const TestCase& c) {
  const Attrs& a = c.attrs;
  Rows r;
  if (c.op == "layerNorm" && a.seqLen && a.embedDim) {
    r.rows = static_cast<std::size_t>(*a.seqLen);
    r.cols = static_cast<std::size_t>(*a.embedDim);
  } else if (c.op == "batchNorm" && a.channels && a.spatial) {
    r.rows = static_cast<std::size_t>(*a.channels);
    r.cols = static_cast<std::size_t>(sizeOf(*a.spatial));
  }
  return r;
}

EpsilonAbi classifyRow(const double* x, std::size_t n, const Multi& e, const Multi& e32) {
  const Multi count(static_cast<double>(n), reference::kOracleBits);
  Multi sum(0, reference::kOracleBits);
  for (std::size_t j = 0; j < n; ++j) sum += Multi(x[j], reference::kOracleBits);
  const Multi mean = sum / count;
  Multi squares(0, reference::kOracleBits);
  for (std::size_t j = 0; j < n; ++j) {
    const Multi c = Multi(x[j], reference::kOracleBits) - mean;
    squares += c * c;
  }
  const Multi var = squares / count;
  if (mpfr::isnan(var)) return EpsilonAbi::Exact;
  const Multi d = var + e, d32 = var + e32;
  if (d <= 0 && d32 <= 0) return EpsilonAbi::Exact;
  if (!(d > 0 && d32 > 0)) return EpsilonAbi::Unsafe;
  const Multi change = mpfr::fabs(mpfr::sqrt(d32 / d) - 1);
  return change <= kSafeRelativeChange ? EpsilonAbi::Safe : EpsilonAbi::Unsafe;
}

}  // namespace

EpsilonAbi classifyEpsilonAbi(const TestCase& c) {
  if (c.op != "layerNorm" && c.op != "batchNorm") return EpsilonAbi::Exact;
  const double e = c.attrs.epsilon.value_or(kNormalizationEpsilon);
  const double e32 = static_cast<double>(static_cast<float>(e));
  if (std::isnan(e) || e32 == e) return EpsilonAbi::Exact;
  const auto x = c.call.find("x");
  if (x == c.call.end() || x->second >= c.leaves.size()) return EpsilonAbi::Exact;
  const TensorData& xs = c.leaves[static_cast<std::size_t>(x->second)].value;
  const Rows r = rowsOf(c);
  if (r.rows == 0 || r.cols == 0 || xs.values.size() / r.cols != r.rows ||
      xs.values.size() % r.cols != 0)
    return EpsilonAbi::Exact;

  reference::prepareScalar<Multi>();
  const Multi em(e, reference::kOracleBits), e32m(e32, reference::kOracleBits);
  EpsilonAbi worst = EpsilonAbi::Exact;
  for (std::size_t row = 0; row < r.rows; ++row) {
    const EpsilonAbi a = classifyRow(xs.values.data() + row * r.cols, r.cols, em, e32m);
    if (a == EpsilonAbi::Unsafe) return a;
    if (a == EpsilonAbi::Safe) worst = a;
  }
  return worst;
}

}  // namespace tapecheck::conformance
