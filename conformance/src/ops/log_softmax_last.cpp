// logSoftmaxLast, log-softmax along the last axis: how it is called, how its generated cases are
// built, the floors and budget its outputs are judged by, and its golden-vector files.
#include "call_support.h"
#include "case_support.h"
#include "corpus_support.h"
#include "floor_support.h"
#include "ops.h"

namespace tapecheck::conformance::ops {
namespace {

Result<NodeId> call(AnyTape& t, const TestCase& c) {
  TAPECHECK_TRY(s, need(c.attrs.s, "s"));
  TAPECHECK_TRY(x, argument(c, "x"));
  return t.logSoftmaxLast(s, x);
}

TestCase makeCase(const CaseParams& p) { return rowCase("logSoftmaxLast", p, true); }

// value: 1 (relative where |y| >= 1, absolute below: log(sum) is accurate to ulps of 1).
// dx_i = dy_i - exp(y_i) * sum(dy): |dy_i| + max(exp(y_i), 2^-126) * sum|dy|, exp(y_i) at its
// binary32 scale (exp(-102) is 2 or 3 times 2^-149 in binary32, and sum(dy) scales that error).
Floors floorsOf(const TestCase& c, const Outcome& e) {
  Floors f = emptyFloors(e);
  if (!sizesMatch(f, c, e)) return f;
  std::fill(f[0].begin(), f[0].end(), 1.0);
  std::vector<double>* dx = gradFloors(f, c, "x");
  if (!dx || c.upstream->values.size() != e.value.values.size()) return f;
  const std::vector<double>& dy = c.upstream->values;
  values::forEachSliceIndices(rowsOf(e.value.shape), [&](const std::vector<std::size_t>& idx) {
    const double total = sumAbsAt(dy, idx);
    for (std::size_t i : idx) {
      const double y = e.value.values[i];
      const double p = std::isfinite(y) ? binary32Scale(std::exp(y)) : 0.0;
      raise(*dx, i, finiteAbs(dy[i]) + p * total);
    }
  });
  return f;
}

constexpr OpBudget kBudget{
    {16, 0.5,
     "(x - max) - log(sum exp(x - max)): log turns the sum's relative error into the same "
     "absolute error, plus 1 ulp for log and 0.5 for the subtraction; judged relative to "
     "max(|y|, 1): absolute near y = 0 where log(sum) cancels the shift"},
    {32, 1,
     "dx = dy - exp(y) * sum(dy): exp(y) inherits y's absolute error as a relative one, the sum "
     "of dy is a second reduction; judged per element against |dy_i| + max(exp(y_i), 2^-126) "
     "* sum|dy|: a subnormal exp(y_i) is known to 2^-150 only, whatever its size"}};

// The golden vectors: the softmax family's cases (softmax_family_corpus.cpp) plus the failure class
// proper to log-softmax, inputs far below zero (pytorch#38839), where a kernel that computes
// log(sum exp(x)) without the max shift returns -inf or NaN.

std::vector<CorpusFile> goldenFiles() {
  std::vector<CorpusFile> files = softmaxFamilyCorpus("logSoftmaxLast");
  std::vector<CaseDef>& edge = files.at(0).cases;
  edge.push_back(CaseDef("three equal entries at -1e7 give -ln 3 each (pytorch#38839)",
                         {"LargeNegative", "Ties"})
                     .leaf({1, 3}, filled(3, -1e7))
                     .arg("x", 0)
                     .s({1, 3})
                     .upstream({1, 3}, {1, 0, 0}));
  edge.push_back(CaseDef("-1e7 beside 0: a log-probability of about -1e7, exact in binary32",
                         {"LargeNegative"})
                     .leaf({2, 2}, {-1e7, 0, 0, -1e7})
                     .arg("x", 0)
                     .s({2, 2})
                     .upstream({2, 2}, {1, 1, 0.5, -0.5}));
  edge.push_back(CaseDef("every entry below -1e30: exp(x) alone underflows to 0 and log(0) is "
                         "-inf without the max shift",
                         {"LargeNegative", "LargeMagnitude"})
                     .leaf({1, 3}, {-1e30f, -1.5e30f, -2e30f})
                     .arg("x", 0)
                     .s({1, 3})
                     .upstream({1, 3}, {1, 2, 3}));
  return files;
}

}  // namespace

OpInfo logSoftmaxLast() {
  OpInfo op;
  op.name = "logSoftmaxLast";
  op.nodeName = "log_softmax";
  op.tensorArgs = {"x"};
  op.attrNames = {"s"};
  op.call = call;
  op.uses = {op.name};
  op.family = ShapeFamily::RowsLast;
  op.fills = softmaxFamilyFills();
  op.hardFlags = softmaxFamilyHardFlags();
  op.budget = &kBudget;
  op.hasBackward = true;
  op.makeCase = makeCase;
  op.floors = floorsOf;
  op.corpus = goldenFiles;
  return op;
}

}  // namespace tapecheck::conformance::ops
