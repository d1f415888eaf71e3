// crossEntropy, the weighted cross-entropy of logits along an axis: how it is called, how its
// generated cases are built, the floors and budget its outputs are judged by, and its
// golden-vector files.
#include "call_support.h"
#include "case_support.h"
#include "corpus_support.h"
#include "floor_support.h"
#include "ops.h"

namespace tapecheck::conformance::ops {
namespace {

Result<NodeId> call(AnyTape& t, const TestCase& c) {
  TAPECHECK_TRY(s, need(c.attrs.s, "s"));
  TAPECHECK_TRY(axis, need(c.attrs.axis, "axis"));
  TAPECHECK_TRY(logits, argument(c, "logits"));
  TAPECHECK_TRY(target, argument(c, "target"));
  return t.crossEntropy(s, axis, logits, target, c.attrs.mean.value_or(true));
}

TestCase makeCase(const CaseParams& p) {
  TestCase c;
  c.op = "crossEntropy";
  const AxisFold fold = axisFold(p.shape, p.axis);
  values::Rng x(values::mix(p.valueSeed, kMain)), t(values::mix(p.valueSeed, kTarget));
  c.leaves.push_back(leaf(p.shape, values::fill(p.fill, fold, x), grads(p, 0)));
  c.leaves.push_back(leaf(p.shape, values::fillTarget(p.target, fold, t), grads(p, 1)));
  c.call = {{"logits", 0}, {"target", 1}};
  c.attrs.s = p.shape;
  c.attrs.axis = p.axis;
  c.attrs.mean = p.mean;
  c.upstream = upstream({}, p.valueSeed);
  return c;
}

// The weighted cross-entropy rule (floor_support.h) with the target as the weights.
Floors floorsOf(const TestCase& c, const Outcome& e) {
  Floors f = emptyFloors(e);
  if (!sizesMatch(f, c, e) || f[0].size() != 1 || !c.attrs.s || !c.attrs.axis) return f;
  crossEntropyFloors(c, leafOf(c, "logits"), leafOf(c, "target"), c.attrs.mean.value_or(true), f,
                     gradFloors(f, c, "logits"), gradFloors(f, c, "target"));
  return f;
}

constexpr OpBudget kBudget{
    {32, 3,
     "logp as logSoftmax (absolute near 0, relative beyond) and one sum over every element of "
     "same-signed terms t * logp (n = the element count); judged against sum t * (|logp| + 1) / "
     "denom: the loss's magnitude plus the ulps of 1 that log(sum) leaves on each term"},
    {32, 3,
     "dlogits = dy * (exp(logp) * T - t) / denom: exp of the saved logp, the slice's weight "
     "total T (a reduction), cancellation where t ~ p * T; judged against the slice's |dy| * (T "
     "* max p + max t) / denom; dtarget = -dy * logp / denom relative to |dy| * max(|logp|, 1) / "
     "denom"}};

// The golden vectors: weighted logits cross-entropy along any axis, soft and unnormalized targets,
// mean on and off, the empty case (loss 0), logits near 1e8 (pytorch#11752), and the validation
// order (axis, size, logits, target).

// logits and target of shape s, both requiring grad; upstream dy (a scalar) unless NaN.
CaseDef ce(const std::string& comment, std::vector<std::string> flags, Shape s,
           std::uint64_t axis, std::vector<double> logits, std::vector<double> target,
           double dy = 1) {
  CaseDef d(comment, std::move(flags));
  d.leaf(s, std::move(logits)).leaf(s, std::move(target)).arg("logits", 0).arg("target", 1);
  d.s(std::move(s)).axis(axis);
  if (!std::isnan(dy)) d.upstream({}, {dy});
  return d;
}

std::vector<CaseDef> edgeCases() {
  std::vector<CaseDef> c;
  c.push_back(ce("[2,3] along axis 1, one-hot targets, mean by default", {"Normal", "OneHot"},
                 {2, 3}, 1, {1, 2, 3, 0.5, -1, 2}, oneHot(2, 3, {2, 0})));
  c.push_back(ce("[2,3] along axis 0: three slices of two", {"Normal", "OneHot"}, {2, 3}, 0,
                 {1, 2, 3, 0.5, -1, 2}, {1, 0, 1, 0, 1, 0}));
  c.push_back(ce("[2,3,2] along axis 1: strided slices (inner 2)", {"HigherRank", "SoftTarget"},
                 {2, 3, 2}, 1, grid(12, 31, 0, 32, 0.125),
                 {0.5, 0.25, 0.25, 0.25, 0.25, 0.5, 1, 0, 0, 0.5, 0, 0.5}));
  c.push_back(ce("[2,3,2] along axis 2", {"HigherRank", "SoftTarget"}, {2, 3, 2}, 2,
                 grid(12, 32, 0, 32, 0.125), filled(12, 0.5)));
  c.push_back(ce("[2,3,2] along axis 0", {"HigherRank", "OneHot"}, {2, 3, 2}, 0,
                 grid(12, 33, 0, 32, 0.125), concat(filled(6, 1), filled(6, 0))));
  c.push_back(ce("rank 1 [5] along axis 0: one slice", {"Normal", "SoftTarget"}, {5}, 0,
                 {0, 1, 2, 3, 4}, {0.125, 0.125, 0.25, 0.25, 0.25}));
  c.push_back(ce("soft targets summing to one", {"SoftTarget"}, {2, 4}, 1,
                 {0.5, 1.5, -0.5, 2, 3, 3, 3, 3}, {0.25, 0.25, 0.25, 0.25, 0.125, 0.375, 0.5, 0}));
  c.push_back(ce("targets summing to 2.5 and 0.5: T scales softmax in the gradient",
                 {"TargetNotNormalized"}, {2, 3}, 1, {1, 2, 3, 3, 2, 1}, {2, 0, 0.5, 0, 0.5, 0}));
  c.push_back(ce("an all-zero target row: T = 0, that row adds nothing",
                 {"TargetNotNormalized"}, {2, 3}, 1, {1, 2, 3, 3, 2, 1}, {0, 0, 0, 0, 1, 0}));
  c.push_back(ce("mean = false: the sum over slices", {"MeanFalse"}, {3, 2}, 1,
                 {1, 2, 0, 0, -1, 1}, oneHot(3, 2, {1, 0, 1}))
                  .mean(false));
  c.push_back(ce("mean = true given explicitly", {"Normal"}, {3, 2}, 1, {1, 2, 0, 0, -1, 1},
                 oneHot(3, 2, {1, 0, 1}))
                  .mean(true));
  c.push_back(ce("mean = false with unnormalized targets", {"MeanFalse", "TargetNotNormalized"},
                 {2, 2}, 0, {0.25, 4, -2, 1}, {3, 0, 0.5, 0.5})
                  .mean(false));
  c.push_back(ce("slices of one: logp = 0, the loss is -0 and the logits gradient is "
                 "softmax*T - t = 0",
                 {"RowOfOne"}, {3, 1}, 1, {5, -5, 0}, {1, 0.5, 0}));
  c.push_back(ce("empty [0,3]: loss -0.0 (the negated zero-seeded sum), empty gradients",
                 {"Empty"}, {0, 3}, 1, {}, {}));
  c.push_back(ce("empty [3,0] along the empty axis: loss -0.0", {"Empty"}, {3, 0}, 1, {}, {}));
  c.push_back(ce("empty [2,0,3] along axis 0, mean = false", {"Empty", "MeanFalse"}, {2, 0, 3},
                 0, {}, {})
                  .mean(false));
  c.push_back(ce("empty [0, 2^33]: the logits are found, then their dimension 2^33 fails "
                 "UInt32",
                 {"Empty", "TooLarge"}, {0, 8589934592ULL}, 1, {}, {})
                  .invalid(errors::kTooLarge));
  c.push_back(ce("an all-zero target: every product is -0, the total +0 and the loss -0.0",
                 {"TargetNotNormalized", "SignedZero"}, {1, 3}, 1, {1, 2, 3}, {0, 0, 0}));
  c.push_back(ce("logits near 1e8, where binary32 spacing is 8 (pytorch#11752)",
                 {"LargeLogits"}, {2, 3}, 1, {1e8, 1e8 + 8, 1e8 - 8, -1e8, -1e8 + 16, -1e8},
                 oneHot(2, 3, {0, 1})));
  c.push_back(ce("1e8 beside 0: the log-probability of 0 is about -1e8", {"LargeLogits"},
                 {1, 3}, 1, {1e8, 0, -5}, {0.25, 0.5, 0.25}));
  c.push_back(ce("logits 88..100, beyond binary32 exp overflow", {"ExpOverflow"}, {2, 3}, 1,
                 {88, 89.5, 100, 90, 90, 90}, oneHot(2, 3, {1, 2})));
  c.push_back(ce("-inf logit with positive weight: the loss is +inf", {"SomeNegInf"}, {1, 3}, 1,
                 {-kInf, 0, 1}, {0.5, 0.5, 0}));
  c.push_back(ce("-inf logit with weight 0: the literal formula gives 0 * -inf = NaN; a kernel "
                 "that skips zero weights gives a finite loss; both accepted",
                 {"ZeroTimesInf"}, {1, 3}, 1, {-kInf, 0, 1}, {0, 1, 0})
                  .acceptable());
  c.push_back(ce("NaN logit: NaN loss and gradients", {"NaN"}, {2, 2}, 1, {kNaN, 1, 2, 3},
                 {1, 0, 0, 1}));
  c.push_back(ce("+inf logit: its slice is NaN", {"PosInf"}, {1, 3}, 1, {kInf, 0, 1},
                 {0, 1, 0}));
  {
    CaseDef d = ce("only target requires grad: dlogits is dropped", {"NoGrad"}, {2, 2}, 1,
                   {1, 2, 3, 5}, {0.5, 0.5, 1, 0});
    d.tc.leaves[0].requiresGrad = false;
    c.push_back(d);
  }
  {
    CaseDef d = ce("nothing requires grad: zero gradients", {"NoGrad"}, {2, 2}, 1,
                   {1, 2, 3, 5}, {0.5, 0.5, 1, 0});
    for (auto& l : d.tc.leaves) l.requiresGrad = false;
    c.push_back(d);
  }
  c.push_back(ce("upstream 2.5 scales both gradients", {"Normal"}, {2, 3}, 1,
                 {0, 1, 2, 2, 1, 0}, oneHot(2, 3, {1, 1}), 2.5));
  c.push_back(ce("forward only (no upstream)", {"Normal"}, {2, 3}, 1, {0, 1, 2, 2, 1, 0},
                 oneHot(2, 3, {2, 2}), kNaN));
  return c;
}

std::vector<CaseDef> widthCases() {
  std::vector<CaseDef> c;
  std::vector<double> t(2050, 0.0);
  for (std::size_t i = 0; i < 1025; i += 41) t[i] = 0.125;   // row 0: 25 weights of 1/8
  t[1025 + 1024] = 1;                                          // row 1: one-hot on the last
  c.push_back(ce("[2,1025] along axis 1", {"OddWidth", "SoftTarget"}, {2, 1025}, 1,
                 grid(2050, 11752, 0, 2048, 1.0 / 256), t));
  c.push_back(ce("[513,3] along axis 0: 513-long strided slices", {"OddWidth", "OneHot"},
                 {513, 3}, 0, grid(1539, 513, 0, 1024, 1.0 / 128),
                 [] {
                   std::vector<double> v(1539, 0.0);
                   v[0] = 1;           // slice 0: the first
                   v[512 * 3 + 1] = 1; // slice 1: the last
                   v[256 * 3 + 2] = 1; // slice 2: the middle
                   return v;
                 }()));
  return c;
}

std::vector<CaseDef> errorCases() {
  using namespace errors;
  std::vector<CaseDef> c;
  const std::vector<double> l6 = ramp(6, 0, 0.5), t6 = oneHot(2, 3, {0, 1});
  c.push_back(ce("axis 2 of a rank-2 shape", {"AxisOutOfBounds"}, {2, 3}, 2, l6, t6)
                  .invalid(kCrossEntropyAxis));
  c.push_back(ce("a scalar has no axis 0", {"AxisOutOfBounds", "Scalar"}, {}, 0, {1}, {1})
                  .invalid(kCrossEntropyAxis));
  c.push_back(CaseDef("axis out of bounds and invalid ids: the axis check comes first",
                      {"AxisOutOfBounds", "ErrorOrder"})
                  .arg("logits", 4)
                  .arg("target", 5)
                  .s({2, 3})
                  .axis(7)
                  .invalid(kCrossEntropyAxis));
  c.push_back(CaseDef("outer 65536, n 65537, inner 1 each fit UInt32: logits is looked up and "
                      "is invalid",
                      {"TooLarge", "ErrorOrder"})
                  .arg("logits", 0)
                  .arg("target", 1)
                  .s({65536, 65537})
                  .axis(1)
                  .invalid(kInvalidNodeId));
  c.push_back(CaseDef("s [2^32, 1], axis 1: outer 2^32 is too large before the lookups",
                      {"TooLarge", "ErrorOrder"})
                  .arg("logits", 0)
                  .arg("target", 1)
                  .s({4294967296ULL, 1})
                  .axis(1)
                  .invalid(kTooLarge));
  c.push_back(ce("logits is invalid", {"InvalidId"}, {2, 3}, 1, l6, t6).arg("logits", 2)
                  .invalid(kInvalidNodeId));
  c.push_back(ce("target is invalid", {"InvalidId"}, {2, 3}, 1, l6, t6).arg("target", 9)
                  .invalid(kInvalidNodeId));
  c.push_back(CaseDef("logits is [3,2] for s = [2,3]", {"ShapeMismatch"})
                  .leaf({3, 2}, l6)
                  .leaf({2, 3}, t6)
                  .arg("logits", 0)
                  .arg("target", 1)
                  .s({2, 3})
                  .axis(1)
                  .invalid(kShapeMismatch));
  c.push_back(CaseDef("target is [6] for s = [2,3]", {"ShapeMismatch"})
                  .leaf({2, 3}, l6)
                  .leaf({6}, t6)
                  .arg("logits", 0)
                  .arg("target", 1)
                  .s({2, 3})
                  .axis(1)
                  .invalid(kShapeMismatch));
  c.push_back(CaseDef("logits is invalid and target has the wrong shape: logits first",
                      {"InvalidId", "ShapeMismatch", "ErrorOrder"})
                  .leaf({6}, t6)
                  .arg("logits", 3)
                  .arg("target", 0)
                  .s({2, 3})
                  .axis(0)
                  .invalid(kInvalidNodeId));
  c.push_back(ce("backward seed [1] for the scalar loss", {"SeedMismatch"}, {2, 3}, 1, l6, t6,
                 kNaN)
                  .upstream({1}, {1})
                  .invalid(kSeedMismatch));
  c.push_back(ce("backward seed [2,3] (the input's shape) for the scalar loss",
                 {"SeedMismatch"}, {2, 3}, 1, l6, t6, kNaN)
                  .upstream({2, 3}, filled(6, 1))
                  .invalid(kSeedMismatch));
  return c;
}

std::vector<CorpusFile> goldenFiles() {
  std::vector<CorpusFile> files;
  files.push_back(CorpusFile{
      "crossEntropy",
      "edge-cases",
      {"crossEntropy (docs/spec.md#operations): loss = -(sum target * logSoftmax_axis(logits)) / "
       "denom, denom = mean ? max(slices, 1) : 1; target weights need not sum to one.",
       "Expected values: the multi-precision reference tape rounded to binary64."},
      edgeCases(),
      {"docs/spec.md#cross-entropy", "docs/spec.md#axis-folding", "docs/spec.md#zero-seeded-sum",
       "docs/spec.md#non-finite-rows", "docs/spec.md#scalar-functions", "docs/spec.md#uint32",
       "docs/spec.md#lookup", "docs/spec.md#deliberate-choices", "docs/spec.md#requires-grad"}});
  files.push_back(CorpusFile{
      "crossEntropy",
      "widths",
      {"crossEntropy on slice lengths just past GPU block sizes, contiguous and strided.",
       "Expected values: the multi-precision reference tape rounded to binary64."},
      widthCases(),
      {"docs/spec.md#cross-entropy", "docs/spec.md#axis-folding"}});
  files.push_back(CorpusFile{
      "crossEntropy",
      "errors",
      {"crossEntropy: the axis check, the UInt32 size check, then lookups in the order logits, "
       "target; backward's seed shape check (the loss is a scalar).",
       "Expected errors are written in the case definitions from docs/spec.md; generation fails if "
       "the reference disagrees."},
      errorCases(),
      {"docs/spec.md#cross-entropy-validation", "docs/spec.md#axis-in-bounds",
       "docs/spec.md#axis-folding", "docs/spec.md#lookup", "docs/spec.md#uint32",
       "docs/spec.md#error-strings", "docs/spec.md#errors-leave-tape-unchanged",
       "docs/spec.md#backward"}});
  return files;
}

}  // namespace

OpInfo crossEntropy() {
  OpInfo op;
  op.name = "crossEntropy";
  op.nodeName = "cross_entropy";
  op.tensorArgs = {"logits", "target"};
  op.attrNames = {"s", "axis"};
  op.optionalAttrNames = {"mean"};
  op.call = call;
  op.uses = {op.name};
  op.family = ShapeFamily::AxisSlices;
  op.fills = {Fill::NearExpOverflow, Fill::Normal,    Fill::VeryNegative, Fill::MeanShifted,
              Fill::IntegerTies,     Fill::NonFinite, Fill::AllEqual};
  op.hardFlags = {"NearExpOverflow", "VeryNegative", "UnnormalizedTarget",
                  "StridedAxis",     "NonFinite",    "Empty"};
  op.budget = &kBudget;
  op.hasBackward = true;
  op.makeCase = makeCase;
  op.floors = floorsOf;
  op.corpus = goldenFiles;
  return op;
}

}  // namespace tapecheck::conformance::ops
