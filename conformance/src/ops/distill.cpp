// distill, the cross-entropy of a student's logits against a constant teacher's softmax along an
// axis: how it is called, how its generated cases are built, the floors and budget its outputs
// are judged by, and its golden-vector files.
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
  TAPECHECK_TRY(student, argument(c, "student"));
  TAPECHECK_TRY(teacher, argument(c, "teacher"));
  return t.distill(s, axis, student, teacher);
}

TestCase makeCase(const CaseParams& p) {
  TestCase c;
  c.op = "distill";
  const AxisFold fold = axisFold(p.shape, p.axis);
  values::Rng s(values::mix(p.valueSeed, kMain)), t(values::mix(p.valueSeed, kTeacher));
  c.leaves.push_back(leaf(p.shape, values::fill(p.fill, fold, s), grads(p, 0)));
  c.leaves.push_back(leaf(p.shape, values::fill(p.fill, fold, t), grads(p, 1)));
  c.call = {{"student", 0}, {"teacher", 1}};
  c.attrs.s = p.shape;
  c.attrs.axis = p.axis;
  c.upstream = upstream({}, p.valueSeed);
  return c;
}

// The weighted cross-entropy rule (floor_support.h) with softmax of the teacher as the weights.
Floors floorsOf(const TestCase& c, const Outcome& e) {
  Floors f = emptyFloors(e);
  if (!sizesMatch(f, c, e) || f[0].size() != 1 || !c.attrs.s || !c.attrs.axis) return f;
  const Shape& s = *c.attrs.s;
  if (*c.attrs.axis >= s.size() || sizeOf(s) == 0) return f;
  const AxisFold fold = foldAxis(s, static_cast<std::size_t>(*c.attrs.axis));
  const Vec p = reference::softmaxAxis<double>(fold, toVec(leafOf(c, "teacher")));
  const std::vector<double> pv(p.data(), p.data() + p.size());
  // The teacher's gradient stays zero (floor 0): it is a constant.
  crossEntropyFloors(c, leafOf(c, "student"), pv, true, f, gradFloors(f, c, "student"), nullptr);
  return f;
}

constexpr OpBudget kBudget{
    {32, 3,
     "softmax of the teacher (relative to the slice's largest p) feeding crossEntropy's forward "
     "(one sum of same-signed terms over every element); judged against sum p * (|log q| + 1) / "
     "slices"},
    {32, 3,
     "dstudent = dy * (q * P - p) / slices: the teacher's p and exp of the saved log q cancel; "
     "judged against the slice's |dy| * (P * max q + max p) / slices; the teacher must get "
     "exactly zero"}};

// The golden vectors: mean teacher-logit cross-entropy, p = softmax_axis(teacher). The teacher is a
// constant: it never receives a gradient, even when it requires grad, and the node requires grad
// exactly when the student does.

// student (requires grad) and teacher (does not, unless told) of shape s; scalar upstream dy
// unless NaN.
CaseDef dist(const std::string& comment, std::vector<std::string> flags, Shape s,
             std::uint64_t axis, std::vector<double> student, std::vector<double> teacher,
             double dy = 1, bool studentGrad = true, bool teacherGrad = false) {
  CaseDef d(comment, std::move(flags));
  d.leaf(s, std::move(student), studentGrad)
      .leaf(s, std::move(teacher), teacherGrad)
      .arg("student", 0)
      .arg("teacher", 1);
  d.s(std::move(s)).axis(axis);
  if (!std::isnan(dy)) d.upstream({}, {dy});
  return d;
}

std::vector<CaseDef> edgeCases() {
  std::vector<CaseDef> c;
  c.push_back(dist("[2,3] along axis 1", {"Normal"}, {2, 3}, 1, {1, 2, 3, 0, 0.5, -1},
                   {3, 2, 1, 0, 0, 1}));
  c.push_back(dist("[2,3] along axis 0", {"Normal"}, {2, 3}, 0, {1, 2, 3, 0, 0.5, -1},
                   {3, 2, 1, 0, 0, 1}));
  c.push_back(dist("[2,3,2] along axis 1: strided slices", {"HigherRank"}, {2, 3, 2}, 1,
                   grid(12, 41, 0, 32, 0.125), grid(12, 42, 0, 32, 0.125)));
  c.push_back(dist("[2,2,3] along axis 2", {"HigherRank"}, {2, 2, 3}, 2,
                   grid(12, 43, 0, 32, 0.125), grid(12, 44, 0, 32, 0.125)));
  c.push_back(dist("rank 1 [4] along axis 0", {"Normal"}, {4}, 0, {0, 1, 2, 3}, {3, 2, 1, 0}));
  c.push_back(dist("the teacher requires grad but receives zeros", {"TeacherRequiresGrad"},
                   {2, 3}, 1, {1, 2, 3, 0, 0.5, -1}, {3, 2, 1, 0, 0, 1}, 1, true, true));
  c.push_back(dist("only the teacher requires grad: the node does not, all gradients are zero",
                   {"TeacherRequiresGrad", "NoGrad"}, {2, 2}, 1, {1, 2, 3, 4}, {4, 3, 2, 1}, 1,
                   false, true));
  c.push_back(dist("teacher equals student: the loss is the entropy, the gradient 0",
                   {"Normal"}, {2, 3}, 1, {0.5, 1, 2, -1, 0, 1}, {0.5, 1, 2, -1, 0, 1}));
  c.push_back(dist("-inf teacher logits get p = 0 and add nothing", {"SomeNegInf"}, {1, 4}, 1,
                   {1, 2, 3, 4}, {-kInf, 0, -kInf, 1}));
  c.push_back(dist("-inf student logit where p > 0: the loss is +inf", {"SomeNegInf"}, {1, 3},
                   1, {-kInf, 0, 1}, {0, 0, 0}));
  c.push_back(dist("-inf student logit where p = 0: 0 * -inf = NaN by the literal formula, a "
                   "kernel may skip it; both accepted",
                   {"ZeroTimesInf"}, {1, 3}, 1, {-kInf, 0, 1}, {-kInf, 0, 0})
                  .acceptable());
  c.push_back(dist("a teacher row of only -inf: p is NaN, so is the loss", {"AllNegInf"},
                   {2, 2}, 1, {1, 2, 3, 4}, {-kInf, -kInf, 0, 1}));
  c.push_back(dist("NaN in the student: NaN loss", {"NaN"}, {1, 3}, 1, {kNaN, 0, 1},
                   {1, 2, 3}));
  c.push_back(dist("logits near 1e8, where binary32 spacing is 8 (pytorch#11752)",
                   {"LargeLogits"}, {2, 3}, 1, {1e8, 1e8 + 8, 1e8 - 8, 0, 1e8, -1e8},
                   {1e8 + 16, 1e8, 1e8, 1e8, 0, 0}));
  c.push_back(dist("teacher logits 88..100: softmax overflows binary32 without the max shift",
                   {"ExpOverflow"}, {1, 4}, 1, {0, 1, 2, 3}, {88, 90, 95, 100}));
  c.push_back(dist("empty [0,3]: loss -0.0 (the negated zero-seeded sum), empty gradient",
                   {"Empty"}, {0, 3}, 1, {}, {}));
  c.push_back(dist("empty [3,0] along the empty axis: loss -0.0", {"Empty"}, {3, 0}, 1, {},
                   {}));
  c.push_back(dist("slices of one: p = 1, logp = 0, loss -0, gradient 0", {"RowOfOne"},
                   {3, 1}, 1, {5, -5, 0}, {1, 2, 3}));
  c.push_back(dist("upstream 0.5", {"Normal"}, {2, 2}, 0, {1, 0, 0, 1}, {0, 0, 1, 1}, 0.5));
  c.push_back(dist("forward only (no upstream)", {"Normal"}, {2, 2}, 1, {1, 0, 0, 1},
                   {0, 0, 1, 1}, kNaN));
  return c;
}

std::vector<CaseDef> widthCases() {
  std::vector<CaseDef> c;
  c.push_back(dist("[2,1025] along axis 1", {"OddWidth"}, {2, 1025}, 1,
                   grid(2050, 1025, 0, 2048, 1.0 / 256), grid(2050, 2025, 0, 2048, 1.0 / 256)));
  c.push_back(dist("[513,2] along axis 0: 513-long strided slices", {"OddWidth"}, {513, 2}, 0,
                   grid(1026, 513, 0, 1024, 1.0 / 128), grid(1026, 1513, 0, 1024, 1.0 / 128)));
  return c;
}

std::vector<CaseDef> errorCases() {
  using namespace errors;
  std::vector<CaseDef> c;
  const std::vector<double> a6 = ramp(6, 0, 0.5), b6 = ramp(6, 1, -0.25);
  c.push_back(dist("axis 2 of a rank-2 shape", {"AxisOutOfBounds"}, {2, 3}, 2, a6, b6)
                  .invalid(kDistillAxis));
  c.push_back(dist("a scalar has no axis 0", {"AxisOutOfBounds", "Scalar"}, {}, 0, {1}, {2})
                  .invalid(kDistillAxis));
  c.push_back(CaseDef("axis out of bounds and invalid ids: the axis check comes first",
                      {"AxisOutOfBounds", "ErrorOrder"})
                  .arg("student", 3)
                  .arg("teacher", 4)
                  .s({2})
                  .axis(1)
                  .invalid(kDistillAxis));
  c.push_back(CaseDef("outer 1, n 65536, inner 65537 each fit UInt32: student is looked up and "
                      "is invalid",
                      {"TooLarge", "ErrorOrder"})
                  .arg("student", 0)
                  .arg("teacher", 1)
                  .s({65536, 65537})
                  .axis(0)
                  .invalid(kInvalidNodeId));
  c.push_back(CaseDef("s [2^32, 1], axis 1: outer 2^32 is too large before the lookups",
                      {"TooLarge", "ErrorOrder"})
                  .arg("student", 0)
                  .arg("teacher", 1)
                  .s({4294967296ULL, 1})
                  .axis(1)
                  .invalid(kTooLarge));
  c.push_back(dist("student is invalid", {"InvalidId"}, {2, 3}, 1, a6, b6).arg("student", 2)
                  .invalid(kInvalidNodeId));
  c.push_back(dist("teacher is invalid", {"InvalidId"}, {2, 3}, 1, a6, b6).arg("teacher", 7)
                  .invalid(kInvalidNodeId));
  c.push_back(CaseDef("student is [3,2] for s = [2,3]", {"ShapeMismatch"})
                  .leaf({3, 2}, a6)
                  .leaf({2, 3}, b6)
                  .arg("student", 0)
                  .arg("teacher", 1)
                  .s({2, 3})
                  .axis(1)
                  .invalid(kShapeMismatch));
  c.push_back(CaseDef("teacher is [2,3,1] for s = [2,3]", {"ShapeMismatch"})
                  .leaf({2, 3}, a6)
                  .leaf({2, 3, 1}, b6)
                  .arg("student", 0)
                  .arg("teacher", 1)
                  .s({2, 3})
                  .axis(1)
                  .invalid(kShapeMismatch));
  c.push_back(CaseDef("student has the wrong shape and teacher is invalid: student first",
                      {"InvalidId", "ShapeMismatch", "ErrorOrder"})
                  .leaf({6}, a6)
                  .arg("student", 0)
                  .arg("teacher", 5)
                  .s({2, 3})
                  .axis(0)
                  .invalid(kShapeMismatch));
  c.push_back(dist("backward seed [1] for the scalar loss", {"SeedMismatch"}, {2, 3}, 1, a6, b6,
                   kNaN)
                  .upstream({1}, {1})
                  .invalid(kSeedMismatch));
  return c;
}

std::vector<CorpusFile> goldenFiles() {
  std::vector<CorpusFile> files;
  files.push_back(CorpusFile{
      "distill",
      "edge-cases",
      {"distill (docs/spec.md#operations): loss = -(sum softmax_axis(teacher) * "
       "logSoftmax_axis(student)) / max(slices, 1); only the student receives a gradient.",
       "Expected values: the multi-precision reference tape rounded to binary64."},
      edgeCases(),
      {"docs/spec.md#distill", "docs/spec.md#cross-entropy", "docs/spec.md#axis-folding",
       "docs/spec.md#zero-seeded-sum", "docs/spec.md#non-finite-rows",
       "docs/spec.md#requires-grad"}});
  files.push_back(CorpusFile{
      "distill",
      "widths",
      {"distill on slice lengths just past GPU block sizes, contiguous and strided.",
       "Expected values: the multi-precision reference tape rounded to binary64."},
      widthCases(),
      {"docs/spec.md#distill", "docs/spec.md#axis-folding"}});
  files.push_back(CorpusFile{
      "distill",
      "errors",
      {"distill: the axis check, the UInt32 size check, then lookups in the order student, "
       "teacher; backward's seed shape check (the loss is a scalar).",
       "Expected errors are written in the case definitions from docs/spec.md; generation fails if "
       "the reference disagrees."},
      errorCases(),
      {"docs/spec.md#distill", "docs/spec.md#cross-entropy-validation",
       "docs/spec.md#axis-in-bounds", "docs/spec.md#axis-folding", "docs/spec.md#lookup",
       "docs/spec.md#uint32", "docs/spec.md#error-strings",
       "docs/spec.md#errors-leave-tape-unchanged", "docs/spec.md#backward"}});
  return files;
}

}  // namespace

OpInfo distill() {
  OpInfo op;
  op.name = "distill";
  op.nodeName = "distill";
  op.tensorArgs = {"student", "teacher"};
  op.attrNames = {"s", "axis"};
  op.call = call;
  op.uses = {op.name};
  op.family = ShapeFamily::AxisSlices;
  op.fills = {Fill::NearExpOverflow, Fill::Normal,      Fill::VeryNegative,
              Fill::MeanShifted,     Fill::IntegerTies, Fill::AllEqual};
  op.hardFlags = {"NearExpOverflow", "VeryNegative", "StridedAxis", "TeacherRequiresGrad",
                  "Empty"};
  op.budget = &kBudget;
  op.hasBackward = true;
  op.constantArgs = {"teacher"};  // the teacher is a constant (docs/spec.md)
  op.makeCase = makeCase;
  op.floors = floorsOf;
  op.corpus = goldenFiles;
  return op;
}

}  // namespace tapecheck::conformance::ops
