// Every flag of the corpus and what it guards (Wycheproof style). A file's `notes` hold the
// flags its tests use, with these descriptions.
#include <map>
#include <string>

#include "tapecheck/vectors/corpus.h"

namespace tapecheck::vectors {

const char* flagDescription(const std::string& flag) {
  static const std::map<std::string, const char*> kFlags = {
      // Ordinary inputs and shapes.
      {"Normal", "Ordinary finite inputs: checks the formulas of docs/spec.md#operations."},
      {"HigherRank", "Rank 3 or more: rows or slices are folded from several leading axes."},
      {"Scalar", "Shape [] (rank 0). Row operations give a constant and a zero gradient; a "
                 "scalar has no axis 0; [] and [1] are different shapes."},
      {"Empty", "A tensor of size 0 ([N,0], [0,N], ...): the value keeps its shape, backward "
                "gives empty gradients, losses are -0.0; an empty tensor with a dimension of "
                "2^32 or more is too large at its lookup and for backward "
                "(docs/spec.md#uint32; pytorch#17256, pytorch#17262)."},
      {"RowOfOne", "Rows or slices of one element: softmax is exactly 1, log-softmax 0, the "
                   "variance 0, the gradient 0."},
      {"NoGrad", "Some leaves do not require grad: their gradients are zeros, and a node "
                 "requires grad only when a parent does."},
      {"NoGradient", "topKMask never requires grad: backward through it gives x zeros even "
                     "when x requires grad."},
      {"Ties", "Equal entries: topKMask keeps the lower index (pytorch#1810); softmax of equal "
               "entries is uniform."},
      {"SignedZero", "-0 and +0 are equal values."},
      // Non-finite inputs.
      {"NaN", "A NaN input: the row (slice, channel, loss) becomes NaN; topKMask ranks NaN "
              "below every number and NaNs among themselves by index."},
      {"PosInf", "A +inf input: inf - inf makes the row NaN."},
      {"AllNegInf", "A row of only -inf: docs/spec.md gives an all-NaN row (0/0), where kernels "
                    "have returned zeros or uniform rows (pytorch#25110)."},
      {"SomeNegInf", "-inf beside finite entries: softmax 0, log-softmax -inf; in a loss, -inf "
                     "with positive weight is +inf."},
      {"ZeroTimesInf", "A zero weight on a -inf log-probability: the literal formula gives "
                       "0 * -inf = NaN, a kernel that skips zero weights gives a finite "
                       "value; the result is 'acceptable'."},
      // Magnitudes.
      {"ExpOverflow", "Entries beyond the binary32 exp overflow point (about 88.72): the row "
                      "maximum must be subtracted before exp."},
      {"LargeNegative", "Inputs near -1e7, where binary32 spacing is 1: log-softmax computed "
                        "without the max shift gives -inf or NaN (pytorch#38839)."},
      {"LargeLogits", "Logits near 1e8, where binary32 spacing is 8 (pytorch#11752)."},
      {"LargeMagnitude", "Magnitudes of 1e18 to 1e30: squares and exponentials leave the "
                         "binary32 range unless computed with care."},
      {"SmallMagnitude", "Magnitudes near 1e-20: the variance is far below epsilon."},
      {"Underflow", "Results below the binary32 range (exp(-100)): binary32 kernels give 0, "
                    "judged against the tensor's scale."},
      {"Subnormal", "Binary32 subnormal inputs (2^-149 .. 2^-126)."},
      {"OddWidth", "Row or slice widths just past GPU block sizes (513, 1025, 1027), where "
                   "kernels that assume a multiple of the block or vector width have failed "
                   "(pytorch#143644, pytorch#147284)."},
      // topKMask.
      {"KZero", "k = 0 keeps nothing."},
      {"KAtLeastCols", "k >= cols keeps everything, including k beyond UInt32."},
      // Normalization.
      {"MeanShifted", "Rows or channels with a large mean (1e3 to 1e4) and a small spread: a "
                      "one-pass E[x^2] - E[x]^2 variance cancels catastrophically in binary32 "
                      "(pytorch#51102, PyTorch PR #40308)."},
      {"ZeroVariance", "Constant rows or channels: the variance is 0 (clamped, never negative) "
                       "and xhat is exactly 0 (TF#34062)."},
      {"OneValuePerChannel", "batchNorm with S = 1: every channel has variance 0 and y = beta "
                             "(TF#34062, Flux PR #2716)."},
      {"SpatialScalar", "batchNorm with spatial = []: x is [channels], S = 1."},
      {"SpatialRank", "batchNorm with a spatial shape of rank 2 or more, folded to S values "
                      "per channel."},
      {"NegativeEpsilon", "A negative epsilon is not rejected: std = sqrt(max(var + epsilon, 0)), "
                          "so var + epsilon <= 0 gives std = 0 (xhat +-inf, or NaN on a "
                          "constant row); where var + epsilon > 0 the result is finite."},
      {"ZeroEpsilon", "epsilon = 0: a zero variance gives 0/0 = NaN."},
      {"EpsilonNotBinary32", "epsilon is not a binary32 number: kernels receive it rounded to "
                             "binary32 (docs/spec.md#epsilon-binary32); for a positive normal "
                             "epsilon the result changes by at most 2^-25 relative."},
      {"EpsilonAbiUnsafe", "Rounding epsilon to binary32, as kernel ABI v1 does, changes this "
                           "result beyond 2^-25 relative or changes its class: device targets "
                           "do not judge it (docs/spec.md#epsilon-abi-safe)."},
      {"TorchLeanTapeDiverges", "TorchLean's own LibTorch tape (commit 3447b74) computes "
                                "something else for this input; tapecheck follows TorchLean's "
                                "Spec (docs/spec.md#tape-divergences)."},
      // Losses.
      {"OneHot", "One-hot targets."},
      {"SoftTarget", "Soft targets: non-negative weights summing to one."},
      {"TargetNotNormalized", "Target weights not summing to one (or all zero): T, the slice "
                              "total, scales softmax in the logits gradient."},
      {"MeanFalse", "mean = false: the loss is the sum over slices, not the mean."},
      {"TeacherRequiresGrad", "distill's teacher is a constant: no gradient reaches it even "
                              "when it requires grad."},
      // Errors.
      {"InvalidId", "A node id past the end of the tape: 'autograd: invalid node id'."},
      {"ShapeMismatch", "A node whose shape differs from the declared one (including [] vs "
                        "[1] and same size, other rank): 'autograd: shape mismatch'."},
      {"TooLarge", "Sizes past UInt32: 'autograd: tensor too large (numel does not fit in "
                   "UInt32)'. rows and cols (or seqLen and embedDim, channels and S, outer, n "
                   "and inner) are checked before the lookups; the element count and every "
                   "dimension at the lookup (docs/spec.md#uint32); 2^32 - 1 fits."},
      {"ErrorOrder", "Two violations at once: docs/spec.md's validation order decides which error "
                     "is reported."},
      {"SeedMismatch", "An upstream (seed) whose shape differs from the output's: 'autograd: "
                       "seed gradient shape mismatch for output'."},
      {"BadDims", "layerNorm with seqLen = 0 or embedDim = 0: 'autograd: layer_norm: seqLen "
                  "and embedDim must be positive'."},
      {"IllFormed", "batchNorm with a zero in channels :: spatial: 'autograd: batch_norm: "
                    "shape must be well-formed'."},
      {"AxisOutOfBounds", "axis >= rank(s): crossEntropy's and distill's axis errors, checked "
                          "first."},
  };
  auto it = kFlags.find(flag);
  return it == kFlags.end() ? nullptr : it->second;
}

}  // namespace tapecheck::vectors
