// topKMask, the mask of each row's k largest entries: how it is called, how its generated cases
// are built, the floors and budget its outputs are judged by, and its golden-vector files.
#include "call_support.h"
#include "case_support.h"
#include "corpus_support.h"
#include "floor_support.h"
#include "ops.h"

namespace tapecheck::conformance::ops {
namespace {

Result<NodeId> call(AnyTape& t, const TestCase& c) {
  TAPECHECK_TRY(s, need(c.attrs.s, "s"));
  TAPECHECK_TRY(k, need(c.attrs.k, "k"));
  TAPECHECK_TRY(x, argument(c, "x"));
  return t.topKMask(s, k, x);
}

TestCase makeCase(const CaseParams& p) {
  TestCase c = rowCase("topKMask", p, false);
  const std::uint64_t cols = p.shape.empty() ? 1 : p.shape.back();
  switch (p.k) {
    case KChoice::One: c.attrs.k = 1; break;
    case KChoice::Small: c.attrs.k = 2 + values::mix(p.valueSeed, kK) % 3; break;
    case KChoice::Half: c.attrs.k = cols / 2 ? cols / 2 : 1; break;
    case KChoice::AllCols: c.attrs.k = cols; break;
    case KChoice::Zero: c.attrs.k = 0; break;
    case KChoice::MoreThanCols: c.attrs.k = cols + 3; break;
  }
  return c;
}

// Exact 0/1 masks: any difference is a whole unit of 1.
Floors floorsOf(const TestCase&, const Outcome& e) {
  Floors f = emptyFloors(e);
  if (!f.empty()) std::fill(f[0].begin(), f[0].end(), 1.0);
  return f;
}

constexpr OpBudget kBudget{
    {0, 0,
     "exact: a mask of 0/1 decided by comparisons of binary32 inputs that both tapes hold "
     "exactly; ties and NaN follow the spec's order, nothing is rounded"},
    {0, 0, "no gradient flows through topKMask (requiresGrad is always false)"}};

// The golden vectors: the order of docs/spec.md (larger first, equal values by lower index, NaN below
// every number and NaNs by index), k = 0 and k >= cols, the scalar and empty cases, and the fact
// that no gradient ever flows through the mask.

std::vector<CaseDef> edgeCases() {
  std::vector<CaseDef> c;
  c.push_back(CaseDef("two rows, k = 2", {"Normal"})
                  .leaf({2, 4}, {1, 4, 2, 3, -1, -4, -2, -3}, false)
                  .arg("x", 0)
                  .s({2, 4})
                  .k(2));
  c.push_back(CaseDef("rank 3, k = 1: the argmax of each row", {"Normal", "HigherRank"})
                  .leaf({2, 2, 3}, grid(12, 3, 0, 100, 0.125), false)
                  .arg("x", 0)
                  .s({2, 2, 3})
                  .k(1));
  c.push_back(CaseDef("k = 0 keeps nothing", {"KZero"})
                  .leaf({2, 3}, {1, 2, 3, 4, 5, 6}, false)
                  .arg("x", 0)
                  .s({2, 3})
                  .k(0));
  c.push_back(CaseDef("k = cols keeps everything", {"KAtLeastCols"})
                  .leaf({2, 3}, {1, 2, 3, 4, 5, 6}, false)
                  .arg("x", 0)
                  .s({2, 3})
                  .k(3));
  c.push_back(CaseDef("k = 100 > cols keeps everything", {"KAtLeastCols"})
                  .leaf({2, 3}, {3, 2, 1, kNaN, 0, -kInf}, false)
                  .arg("x", 0)
                  .s({2, 3})
                  .k(100));
  c.push_back(CaseDef("k = 2^40 does not fit UInt32 but is still 'everything'",
                      {"KAtLeastCols"})
                  .leaf({1, 3}, {0, 1, 2}, false)
                  .arg("x", 0)
                  .s({1, 3})
                  .k(1099511627776ULL));
  c.push_back(CaseDef("k = cols - 1 drops only the smallest", {"Normal"})
                  .leaf({1, 5}, {5, 1, 4, 2, 3}, false)
                  .arg("x", 0)
                  .s({1, 5})
                  .k(4));
  c.push_back(CaseDef("all equal, k = 2: the two lowest indices win (pytorch#1810)", {"Ties"})
                  .leaf({1, 4}, filled(4, 1), false)
                  .arg("x", 0)
                  .s({1, 4})
                  .k(2));
  c.push_back(CaseDef("[3,1,3,2], k = 1: index 0 beats index 2", {"Ties"})
                  .leaf({1, 4}, {3, 1, 3, 2}, false)
                  .arg("x", 0)
                  .s({1, 4})
                  .k(1));
  c.push_back(CaseDef("[1,3,2,3,3], k = 2: of three tied maxima the first two win", {"Ties"})
                  .leaf({1, 5}, {1, 3, 2, 3, 3}, false)
                  .arg("x", 0)
                  .s({1, 5})
                  .k(2));
  c.push_back(CaseDef("-0 and +0 are equal values: index 0 wins", {"Ties", "SignedZero"})
                  .leaf({1, 2}, {-0.0, 0.0}, false)
                  .arg("x", 0)
                  .s({1, 2})
                  .k(1));
  c.push_back(CaseDef("NaN ranks below every number: [NaN, 1, 2], k = 2 keeps 1 and 2",
                      {"NaN"})
                  .leaf({1, 3}, {kNaN, 1, 2}, false)
                  .arg("x", 0)
                  .s({1, 3})
                  .k(2));
  c.push_back(CaseDef("NaN ranks below -inf: [NaN, -inf], k = 1 keeps -inf", {"NaN", "SomeNegInf"})
                  .leaf({1, 2}, {kNaN, -kInf}, false)
                  .arg("x", 0)
                  .s({1, 2})
                  .k(1));
  c.push_back(CaseDef("NaNs among themselves by index: [1, NaN, NaN, NaN], k = 3", {"NaN", "Ties"})
                  .leaf({1, 4}, {1, kNaN, kNaN, kNaN}, false)
                  .arg("x", 0)
                  .s({1, 4})
                  .k(3));
  c.push_back(CaseDef("a row of only NaN, k = 2: the first two", {"NaN"})
                  .leaf({1, 3}, filled(3, kNaN), false)
                  .arg("x", 0)
                  .s({1, 3})
                  .k(2));
  c.push_back(CaseDef("+inf first, -inf last", {"PosInf", "SomeNegInf"})
                  .leaf({1, 4}, {-kInf, 0, kInf, 1}, false)
                  .arg("x", 0)
                  .s({1, 4})
                  .k(2));
  c.push_back(CaseDef("binary32 subnormals keep their order", {"Subnormal"})
                  .leaf({1, 4}, {std::ldexp(1.0, -149), std::ldexp(1.0, -148), 0,
                                 -std::ldexp(1.0, -149)},
                        false)
                  .arg("x", 0)
                  .s({1, 4})
                  .k(2));
  c.push_back(CaseDef("scalar, k = 0: not kept", {"Scalar", "KZero"})
                  .leaf({}, {5}, false)
                  .arg("x", 0)
                  .s({})
                  .k(0));
  c.push_back(CaseDef("scalar, k = 1: kept", {"Scalar"})
                  .leaf({}, {kNaN}, false)
                  .arg("x", 0)
                  .s({})
                  .k(1));
  c.push_back(CaseDef("empty [3,0], k = 2: an empty mask", {"Empty"})
                  .leaf({3, 0}, {}, false)
                  .arg("x", 0)
                  .s({3, 0})
                  .k(2));
  c.push_back(CaseDef("empty [0,3], k = 1: an empty mask", {"Empty"})
                  .leaf({0, 3}, {}, false)
                  .arg("x", 0)
                  .s({0, 3})
                  .k(1));
  c.push_back(CaseDef("rows of one, k = 1: all kept", {"RowOfOne"})
                  .leaf({3, 1}, {kNaN, -kInf, 2}, false)
                  .arg("x", 0)
                  .s({3, 1})
                  .k(1));
  c.push_back(CaseDef("x requires grad: the mask never does, so backward gives x zeros",
                      {"NoGradient"})
                  .leaf({2, 3}, {1, 2, 3, 6, 5, 4})
                  .arg("x", 0)
                  .s({2, 3})
                  .k(1)
                  .upstream({2, 3}, {1, 1, 1, 1, 1, 1}));
  c.push_back(CaseDef("scalar that requires grad, with backward: zero gradient",
                      {"NoGradient", "Scalar"})
                  .leaf({}, {2})
                  .arg("x", 0)
                  .s({})
                  .k(1)
                  .upstream({}, {1}));
  return c;
}

std::vector<CaseDef> widthCases() {
  std::vector<CaseDef> c;
  // Values on a coarse grid so that many ties cross the k boundary.
  c.push_back(CaseDef("513 columns, k = 7, many ties", {"OddWidth", "Ties"})
                  .leaf({2, 513}, grid(1026, 5, 0, 20, 1), false)
                  .arg("x", 0)
                  .s({2, 513})
                  .k(7));
  c.push_back(CaseDef("1025 columns, k = 256, many ties", {"OddWidth", "Ties"})
                  .leaf({2, 1025}, grid(2050, 6, 0, 40, 0.5), false)
                  .arg("x", 0)
                  .s({2, 1025})
                  .k(256));
  std::vector<double> withNaN = grid(1027, 9, 0, 512, 0.25);
  for (std::size_t i = 0; i < withNaN.size(); i += 5) withNaN[i] = kNaN;
  c.push_back(CaseDef("1027 columns, every fifth NaN, k = 900: some NaNs must be kept, the "
                      "first ones",
                      {"OddWidth", "NaN"})
                  .leaf({1, 1027}, withNaN, false)
                  .arg("x", 0)
                  .s({1, 1027})
                  .k(900));
  return c;
}

std::vector<CorpusFile> goldenFiles() {
  std::vector<CorpusFile> files;
  files.push_back(CorpusFile{
      "topKMask",
      "edge-cases",
      {"topKMask (docs/spec.md#operations, Spec.MoE.topKMaskSpec): larger first, equal values by "
       "lower index, NaN below every number; k = 0, k >= cols, scalar, empty; no gradient.",
       "Expected values: the multi-precision reference tape (the mask is exact)."},
      edgeCases(),
      {"docs/spec.md#topk-mask", "docs/spec.md#topk-order", "docs/spec.md#row-op-last",
       "docs/spec.md#requires-grad", "docs/spec.md#backward"}});
  files.push_back(CorpusFile{
      "topKMask",
      "widths",
      {"topKMask on row widths just past GPU block sizes, with ties and NaNs across the k "
       "boundary.",
       "Expected values: the multi-precision reference tape (the mask is exact)."},
      widthCases(),
      {"docs/spec.md#topk-mask", "docs/spec.md#topk-order", "docs/spec.md#row-folding"}});
  files.push_back(CorpusFile{
      "topKMask",
      "errors",
      {"topKMask: docs/spec.md's validation order and error strings (rowOpLast), and backward's seed "
       "shape check.",
       "Expected errors are written in the case definitions from docs/spec.md; generation fails if "
       "the reference disagrees."},
      rowOpLastErrorCases([](CaseDef& d) { d.k(2); }),
      {"docs/spec.md#row-op-last", "docs/spec.md#row-folding", "docs/spec.md#leaf",
       "docs/spec.md#lookup", "docs/spec.md#uint32", "docs/spec.md#error-strings",
       "docs/spec.md#errors-leave-tape-unchanged", "docs/spec.md#backward"}});
  return files;
}

}  // namespace

OpInfo topKMask() {
  OpInfo op;
  op.name = "topKMask";
  op.nodeName = "topk_mask";
  op.tensorArgs = {"x"};
  op.attrNames = {"s", "k"};
  op.call = call;
  op.uses = {op.name};
  op.family = ShapeFamily::RowsLast;
  op.fills = {Fill::IntegerTies, Fill::NonFinite,    Fill::Normal,
              Fill::AllEqual,    Fill::VeryNegative, Fill::MeanShifted};
  op.hardFlags = {"IntegerTies", "AllEqual", "NonFinite", "KZero",
                  "KAboveCols",  "WarpEdge", "LongRow"};
  op.budget = &kBudget;
  op.hasBackward = false;  // the mask never requires grad
  op.makeCase = makeCase;
  op.floors = floorsOf;
  op.corpus = goldenFiles;
  return op;
}

}  // namespace tapecheck::conformance::ops
