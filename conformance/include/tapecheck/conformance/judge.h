// Judging one case: the outcome of the tape under test against an expected outcome (the binary64
// reference, or the multi-precision oracle when binary64 says "fail"; the PyTorch `_refs` rule:
// a kernel is wrong only if it is farther from the exact answer than its budget).
//
// - Errors must match exactly: the same error string, or both succeed.
// - Each output (the value, the gradient of each leaf) is compared element by element in units
//   of binary32 precision of max(|expected|, floor) (ulp.h), floors from the op's rule
//   (op_registry.h / floors), budgets per op and pass (budgets.h). Non-finite values match only
//   in kind. Gradients are also judged as a whole: floor-weighted relative L2 error.
// - An output that is mostly zeros where the expected one is not (more than 90% of its nonzero
//   expected elements came back exactly 0), or a pass whose outputs are all zero on both sides,
//   is MISTRUSTED: agreement proves little.
// - A pass failed even by the oracle only on non-finite values that binary32 evaluation of the
//   spec's formulas gives too is MISTRUSTED (judgeWithOracle, src/binary32_range.h).
// - The dot-product identity <J^T u, v> = <u, J v> (dotProductCheck) checks the gradient under
//   test against a central difference of the reference's forward in binary64.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tapecheck/conformance/op_registry.h"
#include "tapecheck/conformance/run_report.h"

namespace tapecheck::conformance {

inline constexpr double kMistrustZeroFraction = 0.9;
inline constexpr double kBinary32MinNormal = 1.1754943508222875e-38;  // 2^-126: every floor's least
inline constexpr std::size_t kRelL2MinElements = 16;  // gradients judged as a whole from here

struct OutputVerdict {
  std::string name;             // "value", "grad[x]"
  std::size_t elements = 0;
  double maxUlps = 0;           // worst element (infinity for a mismatch of kind)
  std::size_t worstIndex = 0;
  double worstActual = 0, worstExpected = 0, worstFloor = 0;
  double relL2Ulps = 0;         // floor-weighted relative L2 error, in 2^-23
  std::size_t expectedNonzero = 0;
  std::size_t zerosWhereNonzero = 0;  // actual exactly 0 where expected is not
  bool allZero = false;         // expected and actual both all zeros (or empty)
  bool shapeMismatch = false;
};

struct PassVerdict {
  Status status = Status::Passed;
  double maxUlps = 0;           // over the outputs
  double budgetUlps = 0;        // the budget this case was judged against
  // The largest share of a budget any check of the pass used: an element error over the element
  // budget, a whole-gradient error over its budget, the dot-product identity's error over its
  // budget. Below 1 passes; the margin of a kernel to its budgets is 1 - the largest of these.
  double budgetShare = 0;
  std::string reason;           // why it failed or is mistrusted
  std::vector<OutputVerdict> outputs;
};

struct CaseVerdict {
  bool errorCase = false;  // a tape returned an error: only `errors` is judged
  PassVerdict errors;
  PassVerdict fwd;
  std::optional<PassVerdict> bwd;  // when the op has a backward and the case an upstream
};

// ulps / budget; 0 for no error (and for NaN), infinity for an error against a zero budget.
double budgetShare(double ulps, double budget);

// Judges `actual` against `expected` for case `c` of `op`.
CaseVerdict judgeCase(const OpInfo& op, const TestCase& c, const Outcome& actual,
                      const Outcome& expected);

// judgeCase against the binary64 reference and, when that says FAILED, against the
// multi-precision oracle (made by `oracle`): the verdict of the oracle is final. The PyTorch
// `_refs` rule: binary64 is only a proxy for the exact answer.
// When the oracle fails a pass too, and every element beyond budget is a non-finite mismatch at
// which the reference tape at binary32 gives what the tape under test gives, the pass is
// MISTRUSTED instead: the exact value rests on magnitudes outside binary32's range
// (src/binary32_range.h has the example). `binary32` defaults to the reference tape at binary32.
struct ReferencedVerdict {
  CaseVerdict verdict;
  bool oracleConsulted = false;
  std::optional<Outcome> oracle;  // when consulted
  bool binary32Excused = false;   // a pass the oracle failed is MISTRUSTED by the rule above
};
ReferencedVerdict judgeWithOracle(const OpInfo& op, const TestCase& c, const Outcome& actual,
                                  const Outcome& reference64, const TapeFactory& oracle,
                                  const TapeFactory& binary32 = {});

// The element-wise part, for one output: exposed for golden-vector checks and tests. Floors are
// raised to 2^-126, where binary32's ulp stops shrinking (subnormals are 2^-149 apart).
OutputVerdict judgeOutput(const std::string& name, const TensorData& actual,
                          const TensorData& expected, const std::vector<double>& floors);

struct DotCheck {
  bool applicable = false;
  double lhs = 0;         // <J^T u, v>: the gradients under test against the direction v
  double rhs = 0;         // <u, J v>: central difference of the reference forward (binary64)
  double ulps = 0;        // |lhs - rhs| beyond the finite-difference allowance, in 2^-23 of
                          // the scale sum max(|g|, floor) * |v|
  double budgetUlps = 0;  // the op's backward budget for this case
  bool passed = true;
};

// <J^T u, v> = <u, J v> for a random direction v (from `seed`) over the leaves that require
// grad. Not applicable to cases with non-finite inputs or outputs, errors, or no backward.
DotCheck dotProductCheck(const OpInfo& op, const TestCase& c, const Outcome& actual,
                         const Outcome& expected, const TapeFactory& reference64,
                         std::uint64_t seed);

// The floor element i of an output is judged against: its rule's floor, raised to 2^-126.
inline double elementFloor(const std::vector<double>& floors, std::size_t i) {
  return std::max(i < floors.size() ? floors[i] : 0.0, kBinary32MinNormal);
}

}  // namespace tapecheck::conformance
