// How golden-vector results are judged: the distance of a tensor from its expected value, the
// reference budget (binary64 units) and the device budgets (binary32 units), each with its
// reason. vectors/README.md restates them.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "tapecheck/conformance/test_case.h"
#include "tapecheck/conformance/ulp.h"

namespace tapecheck::vectors {

// ---- Distances ---------------------------------------------------------------------------

// err_i = |a_i - e_i| / (unit * max(|e_i|, floor_i)),
// floor_i = max(floorFactor * max_j |e_j|, elementFloors[i])
// with the max over the finite expected values of the tensor (conformance/ulp.h's unitError)
// and elementFloors the op's floor rule (conformance floors: the magnitude of the terms the
// spec's formula combines for that element) when given. Elements far below that scale are
// judged against it, not against their own tiny size: they are the results of cancellation,
// known only to the absolute precision of the terms. Non-finite expected values match only in
// kind (NaN with NaN, +inf with +inf, -inf with -inf).
struct TensorDistance {
  bool shapeMatches = true;
  double maxUlps = 0;      // the worst element's distance (0 for an empty tensor)
  std::size_t worst = 0;   // its flat index
  double actual = 0, expected = 0;
};

TensorDistance tensorDistance(const conformance::TensorData& actual,
                              const conformance::TensorData& expected, double unit,
                              double floorFactor, const std::vector<double>* elementFloors = nullptr);

// ---- The reference check (--target reference) ----------------------------------------------

// The multi-precision oracle (MPFR, 128 bits) evaluates the spec's formulas with a relative
// error far below 2^-100 on every corpus case, so rounded to binary64 it is the correctly
// rounded real value: two correctly rounded results of the same real number are identical, and
// an independent exact source (another arbitrary-precision evaluation, faithful rounding) is
// within 1 ulp. 4 units of 2^-52 leaves room for that last-place disagreement plus a double
// rounding (128 bits -> binary64) while still catching any formula change, which moves results
// by far more. The floors (the op's floor rule, and at least 2^-20 * max|expected| of the
// tensor) keep cancelled components -- gradients that sum to ~0, where the oracle itself leaves
// residues of 2^-128 relative to the terms, log-probabilities near 0 -- from being judged
// relative to their own tiny magnitude.
inline constexpr double kReferenceUnit = conformance::kBinary64Unit;  // 2^-52
inline constexpr double kReferenceBudgetUlps = 4;
inline constexpr double kReferenceFloorFactor = 1.0 / 1048576.0;       // 2^-20

// Files whose expected values were computed by TorchLean at Lean `Float` (provenance
// "lean:...") carry binary64 evaluation error of their own: a recursive sum of n terms is off by
// up to (n-1) * 2^-53 of the sum of magnitudes (Higham, Accuracy and Stability, 4.2), and the
// spec reduces each row up to twice (mean then variance, or value then gradient dot product).
// Their budget is 4 + 2n units of 2^-52, n = the op's forward reduction length for the test
// (conformance::reductionLength, the one `tapecheck run` budgets by).
double referenceBudgetUlps(const std::string& provenance, const conformance::TestCase& c);
bool isLeanProvenance(const std::string& provenance);  // starts with "lean:"

// ---- The device check (--target device) ----------------------------------------------------

// Device results are binary32 and are judged by the conformance judge itself
// (conformance::judgeCase: the per-op, per-pass budgets of conformance/budgets.h in units of
// 2^-23, the per-element floors of each op's rule, gradients also as a relative L2 error), with
// the vector's expected outcome as the reference. A MISTRUSTED verdict (mostly zeros) is not a
// failure of a vector; it is counted and shown.

}  // namespace tapecheck::vectors
