// Error budgets: how far a binary32 result may be from the exact (spec) answer, per operation and
// pass, in units of binary32 precision (2^-23, see ulp.h), the way oneDNN's benchdnn sets a
// threshold per primitive from the data type's epsilon instead of one global tolerance.
//
// A budget is only half of the rule; the other half is the *floor* of each output (ulp.h:
// err = |actual - expected| / (2^-23 * max(|expected|, floor))). The floor is the scale at which
// binary32 arithmetic on these inputs can be accurate at all -- the row's largest probability for
// softmax, |gamma| * max|x| / std for a normalization whose input sits on a large offset -- and is
// computed per element by the op's floor rule (floors.h). The reasoning for both is written next
// to each number below and in conformance/README.md.
//
// Every number assumes a kernel that computes in binary32. A kernel that accumulates a 65537-long
// row strictly left to right in one binary32 accumulator can exceed these budgets; that is a real
// loss of accuracy and is reported as such.
#pragma once

#include <cmath>
#include <string_view>

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
// integers) -- all within these.
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

// The table, by SPEC.md operation name (and by chained-program name for the tape programs of
// programs.h). `nullptr` for an unknown name.
const OpBudget* findBudget(std::string_view op);

namespace budgets {

// Budgets are {ulps, perSqrtN, reason}: ulps + perSqrtN * sqrt(n), n the case's longest
// reduction (reductionLength). The reductions' share is the same for every op that sums a row
// once (0.5) or twice / over every element of a loss (1).

inline constexpr OpBudget kSoftmaxLast{
    {16, 0.5,
     "exp of x - max (exact by Sterbenz near the max; elsewhere its rounding costs |x - max| "
     "ulps only on outputs below max*e^-|x-max|), <= 2 ulps for exp (fast __expf included), 0.5 "
     "for the division, and the row sum; judged against the row's largest probability, so "
     "outputs that underflow next to it are held to the row's scale"},
    {32, 1,
     "dx = y * (dy - <dy, y>): the saved y carries the forward's error, the dot product is a "
     "second reduction and the subtraction cancels; judged against max(y) * max|dy| of the row, "
     "the scale of every term"}};

inline constexpr OpBudget kLogSoftmaxLast{
    {16, 0.5,
     "(x - max) - log(sum exp(x - max)): log turns the sum's relative error into the same "
     "absolute error, plus 1 ulp for log and 0.5 for the subtraction; judged relative to "
     "max(|y|, 1): absolute near y = 0 where log(sum) cancels the shift"},
    {32, 1,
     "dx = dy - exp(y) * sum(dy): exp(y) inherits y's absolute error as a relative one, the sum "
     "of dy is a second reduction; judged per element against |dy_i| + max(exp(y_i), 2^-126) "
     "* sum|dy|: a subnormal exp(y_i) is known to 2^-150 only, whatever its size"}};

inline constexpr OpBudget kTopKMask{
    {0, 0,
     "exact: a mask of 0/1 decided by comparisons of binary32 inputs that both tapes hold "
     "exactly; ties and NaN follow the spec's order, nothing is rounded"},
    {0, 0, "no gradient flows through topKMask (requiresGrad is always false)"}};

inline constexpr OpBudget kLayerNorm{
    {32, 0.5,
     "two reductions (mean, variance), sqrt and the reciprocal 1 ulp each, the affine map 1 "
     "ulp; judged against |gamma| * max|x| * invStd + |beta|: with a large offset (mean "
     "1e3..1e4, small spread) binary32 cannot even represent x - mean better than ulp(max|x|), "
     "so the floor scales the budget by the row's condition max|x|/std -- a kernel using "
     "E[x^2]-E[x]^2 loses that condition squared and fails"},
    {64, 1,
     "dx = invStd * (g - mean(g) - xhat * mean(g * xhat)) on the saved xhat and invStd (each "
     "carrying the forward's error) with two more reductions that cancel; judged against invStd "
     "* max(max|g|, 2^-126) * (1 + max|x| * invStd) per row (a subnormal g or mean is known to "
     "2^-150 only, and invStd scales that); dgamma/dbeta are column sums over the rows "
     "judged against sum |dy| * (1 + max|x| * invStd) and sum |dy|"}};

inline constexpr OpBudget kBatchNorm{
    {32, 0.5,
     "layerNorm's arithmetic on a channel's S values; floor |gamma_c| * max|x_c| * invStd_c + "
     "|beta_c| for the same reason as layerNorm (a channel on a large offset, or a constant "
     "channel whose xhat is rounding noise over sqrt(epsilon))"},
    {64, 1,
     "as layerNorm's backward, per channel: two cancelling reductions over S on the saved "
     "xhat/invStd; dgamma_c, dbeta_c are sums over S judged against sum |dy| * (1 + max|x| * "
     "invStd) and sum |dy|"}};

inline constexpr OpBudget kCrossEntropy{
    {32, 3,
     "logp as logSoftmax (absolute near 0, relative beyond) and one sum over every element of "
     "same-signed terms t * logp (n = the element count); judged against sum t * (|logp| + 1) / "
     "denom: the loss's magnitude plus the ulps of 1 that log(sum) leaves on each term"},
    {32, 3,
     "dlogits = dy * (exp(logp) * T - t) / denom: exp of the saved logp, the slice's weight "
     "total T (a reduction), cancellation where t ~ p * T; judged against the slice's |dy| * (T "
     "* max p + max t) / denom; dtarget = -dy * logp / denom relative to |dy| * max(|logp|, 1) / "
     "denom"}};

inline constexpr OpBudget kDistill{
    {32, 3,
     "softmax of the teacher (relative to the slice's largest p) feeding crossEntropy's forward "
     "(one sum of same-signed terms over every element); judged against sum p * (|log q| + 1) / "
     "slices"},
    {32, 3,
     "dstudent = dy * (q * P - p) / slices: the teacher's p and exp of the saved log q cancel; "
     "judged against the slice's |dy| * (P * max q + max p) / slices; the teacher must get "
     "exactly zero"}};

inline constexpr OpBudget kProgram{
    {64, 2,
     "a chain of two or three ops ending in a loss: about the sum of their forward budgets, "
     "judged against max(|loss|, 1) -- a loss near 0 (a confident softmax's entropy) is known "
     "only to ulps of the log-probabilities, of size 1 -- because the inner op's error is an "
     "input perturbation of the outer one"},
    {256, 16,
     "gradients through the chain, added up where a node feeds two consumers, judged normwise "
     "per leaf: a crossEntropy whose target is softmax(x) feeds softmax's backward with -log p, "
     "of size log(n), whose row dot product cancels to O(1) -- a loss of log(n) * sqrt(n) ulps "
     "inherent in binary32; a gradient that is overwritten instead of accumulated is off by "
     "O(1), millions of ulps"}};

}  // namespace budgets
}  // namespace tapecheck::conformance
