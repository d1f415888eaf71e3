// softmaxLast, softmax along the last axis: how it is called, how its generated cases are built,
// the floors and budget its outputs are judged by, and its golden-vector files.
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
  return t.softmaxLast(s, x);
}

TestCase makeCase(const CaseParams& p) { return rowCase("softmaxLast", p, true); }

// value: the row's largest probability (a tree sum's error is relative to it, and outputs that
// underflow beside it are held to the row's scale). dx = y * (dy - <dy, y>): max(y) * max|dy|
// bounds every term of the row.
Floors floorsOf(const TestCase& c, const Outcome& e) {
  Floors f = emptyFloors(e);
  if (!sizesMatch(f, c, e)) return f;
  const AxisFold fold = rowsOf(e.value.shape);
  std::vector<double>* dx = gradFloors(f, c, "x");
  // The upstream is read at the value's indices: only when they agree in size (a golden
  // vector's expected value may claim a larger shape than its upstream).
  if (dx && c.upstream->values.size() != e.value.values.size()) dx = nullptr;
  values::forEachSliceIndices(fold, [&](const std::vector<std::size_t>& idx) {
    const double ymax = maxAbsAt(e.value.values, idx);
    for (std::size_t i : idx) f[0][i] = ymax;
    if (dx) {
      const double g = 2 * ymax * maxAbsAt(c.upstream->values, idx);
      for (std::size_t i : idx) raise(*dx, i, g);
    }
  });
  return f;
}

constexpr OpBudget kBudget{
    {16, 0.5,
     "exp of x - max (exact by Sterbenz near the max; elsewhere its rounding costs |x - max| "
     "ulps only on outputs below max*e^-|x-max|), <= 2 ulps for exp (fast __expf included), 0.5 "
     "for the division, and the row sum; judged against the row's largest probability, so "
     "outputs that underflow next to it are held to the row's scale"},
    {32, 1,
     "dx = y * (dy - <dy, y>): the saved y carries the forward's error, the dot product is a "
     "second reduction and the subtraction cancels; judged against max(y) * max|dy| of the row, "
     "the scale of every term"}};

// The golden vectors: softmax_family_corpus.cpp.
std::vector<CorpusFile> goldenFiles() { return softmaxFamilyCorpus("softmaxLast"); }

}  // namespace

OpInfo softmaxLast() {
  OpInfo op;
  op.name = "softmaxLast";
  op.nodeName = "softmax";
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
