// layerNorm over the embedding of each row of x [seqLen, embedDim]: how it is called, how its
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
  TAPECHECK_TRY(seqLen, need(c.attrs.seqLen, "seqLen"));
  TAPECHECK_TRY(embedDim, need(c.attrs.embedDim, "embedDim"));
  TAPECHECK_TRY(x, argument(c, "x"));
  TAPECHECK_TRY(gamma, argument(c, "gamma"));
  TAPECHECK_TRY(beta, argument(c, "beta"));
  return t.layerNorm(seqLen, embedDim, x, gamma, beta,
                     c.attrs.epsilon.value_or(kNormalizationEpsilon));
}

TestCase makeCase(const CaseParams& p) {
  TestCase c;
  c.op = "layerNorm";
  const Dim rows = p.shape.at(0), cols = p.shape.at(1);
  normLeaves(c, p, {static_cast<std::uint32_t>(rows), static_cast<std::uint32_t>(cols), 1},
             static_cast<std::size_t>(cols));
  c.attrs.seqLen = rows;
  c.attrs.embedDim = cols;
  return c;
}

// The normalization rule (floor_support.h) over the rows, gamma and beta by column.
Floors floorsOf(const TestCase& c, const Outcome& e) {
  const std::uint32_t rows = static_cast<std::uint32_t>(c.attrs.seqLen.value_or(0));
  const std::uint32_t cols = static_cast<std::uint32_t>(c.attrs.embedDim.value_or(0));
  return normalizationFloors(c, e, {rows, cols, 1}, true);
}

constexpr OpBudget kBudget{
    {32, 1,
     "two reductions (mean, variance), sqrt and the reciprocal 1 ulp each, the affine map 1 "
     "ulp; the mean of a constant row summed in 32 lanes is off by up to n/256 ulps (the "
     "lanes' roundings all err the same way), within 32 + sqrt(n) up to n = 81000; "
     "judged against |gamma| * max|x| * invStd + |beta|: with a large offset (mean "
     "1e3..1e4, small spread) binary32 cannot even represent x - mean better than ulp(max|x|), "
     "so the floor scales the budget by the row's condition max|x|/std -- a kernel using "
     "E[x^2]-E[x]^2 loses that condition squared and fails"},
    {64, 2,
     "dx = invStd * (g - mean(g) - xhat * mean(g * xhat)) on the saved xhat and invStd (each "
     "carrying the forward's error) with two more reductions that cancel; judged against invStd "
     "* max(max|g|, 2^-126) * (1 + max|x| * invStd) per row (a subnormal g or mean is known to "
     "2^-150 only, and invStd scales that); dgamma/dbeta are column sums over the rows "
     "judged against sum |dy| * (1 + max|x| * invStd) and sum |dy|; twice the forward's "
     "budget, so that the whole-gradient check (half of it) admits the forward's bias on a "
     "constant row, which every dx of the row inherits"}};

// The golden vectors: the spec's formulas (double centering, variance clamped at 0, the caller's
// epsilon in both passes), mean-shifted rows (pytorch#51102, PR #40308), zero variance, negative
// and zero epsilon, widths past GPU block sizes, and the validation order x, gamma, beta after the
// positivity and size checks.

// x [seqLen, embedDim], gamma and beta [embedDim], every leaf requiring grad, with upstream.
CaseDef ln(const std::string& comment, std::vector<std::string> flags, std::uint64_t seqLen,
           std::uint64_t embedDim, std::vector<double> x, std::vector<double> gamma,
           std::vector<double> beta, std::vector<double> dy) {
  CaseDef d(comment, std::move(flags));
  d.leaf({seqLen, embedDim}, std::move(x))
      .leaf({embedDim}, std::move(gamma))
      .leaf({embedDim}, std::move(beta))
      .arg("x", 0)
      .arg("gamma", 1)
      .arg("beta", 2)
      .seqLen(seqLen)
      .embedDim(embedDim);
  if (!dy.empty()) d.upstream({seqLen, embedDim}, std::move(dy));
  return d;
}

std::vector<CaseDef> edgeCases() {
  std::vector<CaseDef> c;
  c.push_back(ln("two rows of three, unit gamma, zero beta", {"Normal"}, 2, 3,
                 {1, 2, 3, -1, 0, 4}, {1, 1, 1}, {0, 0, 0}, {1, 0, -1, 0.5, 0.5, 0.5}));
  c.push_back(ln("gamma and beta of mixed sign", {"Normal"}, 2, 4,
                 {0.5, -1.5, 2, 3, 10, 11, 9, 12}, {2, -1, 0.5, 0}, {0.25, -3, 1, 7},
                 {1, -1, 2, 0, 0.25, 4, -2, 1}));
  c.push_back(ln("explicit epsilon 1e-5, the default, given in attrs", {"Normal"}, 1, 4,
                 {1, 2, 4, 8}, {1, 1, 1, 1}, {0, 0, 0, 0}, {1, 2, 3, 4})
                  .epsilon(1e-5));
  c.push_back(ln("epsilon 0.1 is not binary32: the device rounds it", {"EpsilonNotBinary32"}, 2,
                 2, {1, 2, 3, 5}, {1, 2}, {0, 1}, {1, 1, 1, -1})
                  .epsilon(0.1));
  c.push_back(ln("large epsilon 1: dominates the variance", {"Normal"}, 1, 3, {0, 1, 2},
                 {1, 1, 1}, {0, 0, 0}, {1, 0, 0})
                  .epsilon(1));
  c.push_back(ln("seqLen 1, embedDim 1: variance 0, xhat 0, y = beta", {"RowOfOne",
                 "ZeroVariance"},
                 1, 1, {42}, {3}, {-1}, {2}));
  c.push_back(ln("embedDim 1 over four rows: every row has zero variance", {"RowOfOne",
                 "ZeroVariance"},
                 4, 1, {1, -2, 1e30f, 0}, {2}, {0.5}, {1, 1, 1, 1}));
  c.push_back(ln("a constant row beside a normal one", {"ZeroVariance"}, 2, 3,
                 {7, 7, 7, 1, 2, 4}, {1, 1, 1}, {0, 0, 0}, {1, 2, 3, 1, 2, 3}));
  c.push_back(ln("rows with mean 1000 and spread 1 (pytorch#51102)", {"MeanShifted"}, 2, 8,
                 grid(16, 51102, 1000, 64, 1.0 / 64), {1, 1, 1, 1, 1, 1, 1, 1},
                 {0, 0, 0, 0, 0, 0, 0, 0}, grid(16, 2, 0, 8, 0.25)));
  c.push_back(ln("rows with mean 1e4 and spread 0.5: one-pass E[x^2]-E[x]^2 loses every digit "
                 "in binary32 (PR #40308)",
                 {"MeanShifted"}, 3, 16, grid(48, 40308, 10000, 32, 1.0 / 64), filled(16, 1),
                 filled(16, 0), grid(48, 3, 0, 8, 0.25)));
  c.push_back(ln("rows with mean -1e4 and gamma 2", {"MeanShifted"}, 2, 5,
                 grid(10, 7, -10000, 64, 1.0 / 32), filled(5, 2), filled(5, 0.5),
                 grid(10, 4, 0, 4, 0.5)));
  c.push_back(ln("negative epsilon -1e-5 on a constant row: std = sqrt(max(-1e-5, 0)) = 0, so "
                 "xhat = 0/0 is NaN there",
                 {"NegativeEpsilon", "ZeroVariance"},
                 2, 3, {2, 2, 2, 0, 1, 2}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1, 1, 1, 1})
                  .epsilon(-1e-5));
  c.push_back(ln("negative epsilon -0.5 smaller than the variance: finite", {"NegativeEpsilon"},
                 1, 4, {0, 2, 4, 6}, {1, 1, 1, 1}, {0, 0, 0, 0}, {1, -1, 1, -1})
                  .epsilon(-0.5));
  c.push_back(ln("var + epsilon = -1: the Spec's std = sqrt(max(-1, 0)) = 0 gives xhat = -inf, "
                 "+inf; TorchLean's LibTorch tape takes sqrt(-1) = NaN "
                 "(docs/spec.md#divergence-layer-norm-clamped-sqrt)",
                 {"TorchLeanTapeDiverges", "NegativeEpsilon"}, 1, 2, {1, 3}, {1, 1}, {0, 0},
                 {1, 1})
                  .epsilon(-2));
  c.push_back(ln("epsilon 0 on a constant row: 0/0 is NaN", {"ZeroEpsilon", "ZeroVariance"}, 1,
                 3, {5, 5, 5}, {1, 1, 1}, {0, 0, 0}, {1, 0, 0})
                  .epsilon(0));
  c.push_back(ln("epsilon 0 on a normal row: finite", {"ZeroEpsilon"}, 1, 3, {1, 2, 3},
                 {1, 1, 1}, {0, 0, 0}, {0, 1, 0})
                  .epsilon(0));
  c.push_back(ln("tiny values 1e-20: the variance (1e-40) is far below epsilon",
                 {"SmallMagnitude"}, 1, 4, {1e-20f, -1e-20f, 2e-20f, 0}, {1, 1, 1, 1},
                 {0, 0, 0, 0}, {1, 2, 3, 4}));
  c.push_back(ln("large values 1e18: squares near 1e36, close to the binary32 limit",
                 {"LargeMagnitude"}, 1, 4, {1e18f, -1e18f, 3e18f, 0}, {1, 1, 1, 1},
                 {0, 0, 0, 0}, {1, 0, 0, -1}));
  c.push_back(ln("NaN in one row makes that row NaN", {"NaN"}, 2, 3, {1, kNaN, 3, 1, 2, 3},
                 {1, 1, 1}, {0, 0, 0}, {1, 1, 1, 1, 1, 1}));
  c.push_back(ln("+inf in a row makes it NaN (inf - inf)", {"PosInf"}, 2, 2, {kInf, 1, 2, 3},
                 {1, 1}, {0, 0}, {1, 1, 1, 1}));
  {
    CaseDef d = ln("only gamma requires grad: x and beta get zeros", {"NoGrad"}, 2, 3,
                   {1, 2, 3, 3, 2, 1}, {1, 2, 3}, {1, 1, 1}, {1, 1, 1, 1, 1, 1});
    d.tc.leaves[0].requiresGrad = false;
    d.tc.leaves[2].requiresGrad = false;
    c.push_back(d);
  }
  {
    CaseDef d = ln("no leaf requires grad: every gradient is zero", {"NoGrad"}, 1, 3,
                   {1, 2, 4}, {1, 1, 1}, {0, 0, 0}, {1, 2, 3});
    for (auto& l : d.tc.leaves) l.requiresGrad = false;
    c.push_back(d);
  }
  c.push_back(ln("forward only (no upstream)", {"Normal"}, 3, 2, {1, 2, 3, 4, 5, 7},
                 {0.5, 2}, {1, -1}, {}));
  c.push_back(ln("zero gamma: y = beta, dx = 0", {"Normal"}, 1, 3, {1, 2, 4}, {0, 0, 0},
                 {1, 2, 3}, {1, 1, 1}));
  return c;
}

std::vector<CaseDef> widthCases() {
  std::vector<CaseDef> c;
  c.push_back(ln("embedDim 513", {"OddWidth"}, 2, 513, grid(1026, 513, 0, 1024, 1.0 / 128),
                 grid(513, 514, 1, 64, 1.0 / 128), grid(513, 515, 0, 64, 1.0 / 128),
                 grid(1026, 516, 0, 64, 1.0 / 64)));
  c.push_back(ln("embedDim 1025", {"OddWidth"}, 2, 1025, grid(2050, 1025, 0, 1024, 1.0 / 128),
                 grid(1025, 1026, 1, 64, 1.0 / 128), grid(1025, 1027, 0, 64, 1.0 / 128),
                 grid(2050, 1028, 0, 64, 1.0 / 64)));
  c.push_back(ln("embedDim 1027 with mean 1000 (pytorch#51102 on a wide row)",
                 {"OddWidth", "MeanShifted"}, 1, 1027, grid(1027, 1029, 1000, 256, 1.0 / 256),
                 filled(1027, 1), filled(1027, 0), grid(1027, 1030, 0, 16, 0.125)));
  return c;
}

std::vector<CaseDef> errorCases() {
  using namespace errors;
  std::vector<CaseDef> c;
  const std::vector<double> x6 = ramp(6, 1, 1), g3 = filled(3, 1), b3 = filled(3, 0);
  c.push_back(ln("seqLen 0", {"BadDims"}, 0, 3, {}, g3, b3, {}).invalid(kLayerNormDims));
  c.push_back(ln("embedDim 0", {"BadDims"}, 2, 0, {}, {}, {}, {}).invalid(kLayerNormDims));
  c.push_back(CaseDef("seqLen 0 with invalid ids: the dimension check comes first",
                      {"BadDims", "ErrorOrder"})
                  .arg("x", 5)
                  .arg("gamma", 6)
                  .arg("beta", 7)
                  .seqLen(0)
                  .embedDim(0)
                  .invalid(kLayerNormDims));
  c.push_back(CaseDef("seqLen 65536 and embedDim 65537 each fit UInt32: the lookups run first "
                      "and x is invalid",
                      {"TooLarge", "ErrorOrder"})
                  .arg("x", 0)
                  .arg("gamma", 1)
                  .arg("beta", 2)
                  .seqLen(65536)
                  .embedDim(65537)
                  .invalid(kInvalidNodeId));
  c.push_back(CaseDef("embedDim 2^32 is too large before the lookups", {"TooLarge", "ErrorOrder"})
                  .arg("x", 0)
                  .arg("gamma", 1)
                  .arg("beta", 2)
                  .seqLen(1)
                  .embedDim(4294967296ULL)
                  .invalid(kTooLarge));
  c.push_back(ln("x is invalid", {"InvalidId"}, 2, 3, x6, g3, b3, {}).arg("x", 3)
                  .invalid(kInvalidNodeId));
  c.push_back(ln("gamma is invalid", {"InvalidId"}, 2, 3, x6, g3, b3, {}).arg("gamma", 9)
                  .invalid(kInvalidNodeId));
  c.push_back(ln("beta is invalid", {"InvalidId"}, 2, 3, x6, g3, b3, {}).arg("beta", 3)
                  .invalid(kInvalidNodeId));
  c.push_back(CaseDef("x is [3,2] for seqLen 2, embedDim 3", {"ShapeMismatch"})
                  .leaf({3, 2}, x6)
                  .leaf({3}, g3)
                  .leaf({3}, b3)
                  .arg("x", 0)
                  .arg("gamma", 1)
                  .arg("beta", 2)
                  .seqLen(2)
                  .embedDim(3)
                  .invalid(kShapeMismatch));
  c.push_back(CaseDef("gamma is [2] for embedDim 3", {"ShapeMismatch"})
                  .leaf({2, 3}, x6)
                  .leaf({2}, {1, 1})
                  .leaf({3}, b3)
                  .arg("x", 0)
                  .arg("gamma", 1)
                  .arg("beta", 2)
                  .seqLen(2)
                  .embedDim(3)
                  .invalid(kShapeMismatch));
  c.push_back(CaseDef("beta is [1,3] for embedDim 3", {"ShapeMismatch"})
                  .leaf({2, 3}, x6)
                  .leaf({3}, g3)
                  .leaf({1, 3}, b3)
                  .arg("x", 0)
                  .arg("gamma", 1)
                  .arg("beta", 2)
                  .seqLen(2)
                  .embedDim(3)
                  .invalid(kShapeMismatch));
  c.push_back(CaseDef("x is invalid and gamma has the wrong shape: x is looked up first",
                      {"InvalidId", "ShapeMismatch", "ErrorOrder"})
                  .leaf({2}, {1, 1})
                  .arg("x", 4)
                  .arg("gamma", 0)
                  .arg("beta", 0)
                  .seqLen(2)
                  .embedDim(3)
                  .invalid(kInvalidNodeId));
  c.push_back(CaseDef("gamma has the wrong shape and beta is invalid: gamma comes first",
                      {"InvalidId", "ShapeMismatch", "ErrorOrder"})
                  .leaf({2, 3}, x6)
                  .leaf({2}, {1, 1})
                  .arg("x", 0)
                  .arg("gamma", 1)
                  .arg("beta", 8)
                  .seqLen(2)
                  .embedDim(3)
                  .invalid(kShapeMismatch));
  c.push_back(ln("backward seed [3,2] for a [2,3] output", {"SeedMismatch"}, 2, 3, x6, g3, b3,
                 {})
                  .upstream({3, 2}, filled(6, 1))
                  .invalid(kSeedMismatch));
  c.push_back(ln("backward seed [] for a [1,1] output", {"SeedMismatch", "Scalar"}, 1, 1, {2},
                 {1}, {0}, {})
                  .upstream({}, {1})
                  .invalid(kSeedMismatch));
  return c;
}

std::vector<CorpusFile> goldenFiles() {
  std::vector<CorpusFile> files;
  files.push_back(CorpusFile{
      "layerNorm",
      "edge-cases",
      {"layerNorm (docs/spec.md#operations): x [seqLen, embedDim], gamma and beta [embedDim]; the "
       "spec centers twice, clamps the variance at 0 and uses the caller's epsilon.",
       "Expected values: the multi-precision reference tape rounded to binary64."},
      edgeCases(),
      {"docs/spec.md#layer-norm", "docs/spec.md#clamped-sqrt", "docs/spec.md#lean-max",
       "docs/spec.md#default-epsilon", "docs/spec.md#epsilon-binary32",
       "docs/spec.md#epsilon-abi-safe", "docs/spec.md#divergence-layer-norm-clamped-sqrt",
       "docs/spec.md#pullbacks", "docs/spec.md#requires-grad"}});
  files.push_back(CorpusFile{
      "layerNorm",
      "widths",
      {"layerNorm on embedDim just past GPU block sizes (512, 1024).",
       "Expected values: the multi-precision reference tape rounded to binary64."},
      widthCases(),
      {"docs/spec.md#layer-norm", "docs/spec.md#pullbacks"}});
  files.push_back(CorpusFile{
      "layerNorm",
      "errors",
      {"layerNorm: positive dimensions, seqLen and embedDim each against UInt32, then lookups "
       "in the order x, gamma, beta, the element count checked at x's; backward's seed shape "
       "check.",
       "Expected errors are written in the case definitions from docs/spec.md; generation fails if "
       "the reference disagrees."},
      errorCases(),
      {"docs/spec.md#layer-norm-validation", "docs/spec.md#lookup", "docs/spec.md#uint32",
       "docs/spec.md#error-strings", "docs/spec.md#errors-leave-tape-unchanged",
       "docs/spec.md#backward"}});
  return files;
}

}  // namespace

OpInfo layerNorm() {
  OpInfo op;
  op.name = "layerNorm";
  op.nodeName = "layer_norm";
  op.tensorArgs = {"x", "gamma", "beta"};
  op.attrNames = {"seqLen", "embedDim"};
  op.optionalAttrNames = {"epsilon"};
  op.call = call;
  op.uses = {op.name};
  op.family = ShapeFamily::SeqEmbed;
  op.fills = {Fill::MeanShifted, Fill::Normal,      Fill::EpsDominated,
              Fill::AllEqual,    Fill::IntegerTies, Fill::NonFinite};
  op.hardFlags = {"MeanShifted", "ZeroVariance", "EpsDominated",
                  "NonFinite",   "LongRow",      "WarpEdge"};
  op.budget = &kBudget;
  op.hasBackward = true;
  op.makeCase = makeCase;
  op.floors = floorsOf;
  op.corpus = goldenFiles;
  return op;
}

}  // namespace tapecheck::conformance::ops
