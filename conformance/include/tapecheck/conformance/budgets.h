// Error budgets: how far a binary32 result may be from the exact (spec) answer, per operation and
// pass, in units of binary32 precision (2^-23, see ulp.h), the way oneDNN's benchdnn sets a
// threshold per primitive from the data type's epsilon instead of one global tolerance.
//
// A budget is only half of the rule; the other half is the *floor* of each output (ulp.h:
// err = |actual - expected| / (2^-23 * max(|expected|, floor))). The floor is the scale at which
// binary32 arithmetic on these inputs can be accurate at all -- the row's largest probability for
// softmax, |gamma| * max|x| / std for a normalization whose input sits on a large offset -- and is
// computed per element by the op's floor rule. Each op's budget and floor rule, with the
// reasoning next to each number, are in its file (src/ops/<op>.cpp) and in conformance/README.md.
//
// Every number assumes a kernel that computes in binary32 and sums the way parallel kernels do:
// partial sums in 32 or more lanes then a tree, pairwise, compensated, Welford, an online softmax
// (device/plugins/legit.txt, each certified in CI). A kernel that accumulates a whole row left to
// right in one binary32 accumulator exceeds them and is rejected on purpose
// (conformance/README.md, Budgets, says why).
#pragma once

#include <cmath>

namespace tapecheck::conformance {

// The largest element error allowed, in units of 2^-23 of the element's floor, for a case whose
// longest reduction behind an output element has n terms (reductionLength in op_registry.h):
//   ulps + perSqrtN * sqrt(n)
// The first term is the op's own arithmetic (exp, log, sqrt, divisions, cancellation); the second
// the reductions (3 for the losses: their logSoftmax, the weight totals and the sum over every
// element stack up, and on rows of tied integers ATen's errors do not average out). A tree sum of n terms (GPU warp/block reductions) is within log2(n) ulps of the
// sum of magnitudes, but CPU kernels (ATen) accumulate a row in a few vector lanes, whose
// rounding errors add up like a random walk: ~sqrt(n) ulps. Measured on ATen 1.13 (CPU, 2^14-long
// rows): softmax 38, crossEntropy's gradient 130, distill's loss 177 ulps (n = 6891, tied
// integers) -- all within these. Each op writes its budgets as {ulps, perSqrtN, reason}; the
// reductions' share is the same for every op that sums a row once (0.5) or twice / over every
// element of a loss (1); the normalizations' mean gets 1 (2 backward) because on a constant row
// every rounding of a lane's partial sum errs the same way: k equal terms added in order are off
// by up to k/8 ulps, k = n/32 for a warp per row (conformance/README.md, Budgets).
struct PassBudget {
  double ulps = 0;
  double perSqrtN = 0;
  const char* reason = "";  // why these numbers
};

inline double budgetUlps(const PassBudget& b, double n) {
  return b.ulps + b.perSqrtN * std::sqrt(n > 1 ? n : 1.0);
}

struct OpBudget {
  PassBudget fwd;
  PassBudget bwd;
  // Gradients are also judged as a whole: sqrt(sum (a - e)^2) / sqrt(sum max(|e|, floor)^2), in
  // 2^-23, against this fraction of the element budget: an error spread over every element is a
  // systematic bias (a wrong scale, a dropped term) even when each element stays in budget.
  double bwdRelL2Fraction = 0.5;
};

}  // namespace tapecheck::conformance
