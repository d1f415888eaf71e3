// Judging with hand-made numbers: ulp distances, non-finite kinds, mistrust, budgets, the oracle
// fallback and the dot-product identity.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>

#include "tapecheck/conformance/judge.h"
#include "tapecheck/conformance/reference_tapes.h"
#include "tapecheck/conformance/ulp.h"

using tapecheck::Dim;
using tapecheck::Shape;
using tapecheck::sizeOf;
using namespace tapecheck::conformance;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// One row x of a last-axis op (softmaxLast, logSoftmaxLast), with upstream dy when given.
TestCase rowCase(const char* op, const std::vector<double>& x,
                 std::optional<std::vector<double>> dy) {
  TestCase c;
  c.op = op;
  const Shape s{x.size()};
  c.leaves.push_back({{s, x}, true});
  c.call = {{"x", 0}};
  c.attrs.s = s;
  if (dy) c.upstream = TensorData{s, *dy};
  return c;
}

TestCase softmaxCase(const std::vector<double>& x, bool withUpstream = true) {
  std::vector<double> dy(x.size());
  for (std::size_t i = 0; i < dy.size(); ++i) dy[i] = 0.25 * static_cast<double>(i % 5) - 0.5;
  return rowCase("softmaxLast", x, withUpstream ? std::optional(dy) : std::nullopt);
}

Outcome run(std::unique_ptr<AnyTape> tape, const TestCase& c) { return evaluate(*tape, c); }

// distill on one slice of 3: student logits {-inf, 0, 1}, teacher logits {-124, 0, 0}.
TestCase distillAtRangeEdge() {
  TestCase c;
  c.op = "distill";
  const Shape s{1, 3};
  c.leaves.push_back({{s, {-kInf, 0, 1}}, true});
  c.leaves.push_back({{s, {-124, 0, 0}}, false});
  c.call = {{"student", 0}, {"teacher", 1}};
  c.attrs.s = s;
  c.attrs.axis = 1;
  c.upstream = TensorData{Shape{}, {1}};
  return c;
}

}  // namespace

TEST_CASE("unitError counts binary32 steps of max(|expected|, floor)", "[judge]") {
  CHECK(unitError(1.0 + 3 * kBinary32Unit, 1.0, kBinary32Unit, 0) == Approx(3));
  CHECK(unitError(4.0 + 4 * 3 * kBinary32Unit, 4.0, kBinary32Unit, 0) == Approx(3));
  // A value that cancelled to almost nothing is judged at the floor's scale.
  CHECK(unitError(1e-9, 0.0, kBinary32Unit, 1.0) == Approx(1e-9 / kBinary32Unit));
  CHECK(unitError(2.0, 2.0, kBinary32Unit, 0) == 0);
  CHECK(unitError(1e-30, 0.0, kBinary32Unit, 0) == kInf);  // no scale at all
}

TEST_CASE("non-finite values match only in kind", "[judge]") {
  CHECK(unitError(kNaN, kNaN, kBinary32Unit, 1) == 0);
  CHECK(unitError(kInf, kInf, kBinary32Unit, 1) == 0);
  CHECK(unitError(-kInf, -kInf, kBinary32Unit, 1) == 0);
  CHECK(unitError(-kInf, kInf, kBinary32Unit, 1) == kInf);
  CHECK(unitError(kNaN, 1.0, kBinary32Unit, 1) == kInf);
  CHECK(unitError(1.0, kNaN, kBinary32Unit, 1) == kInf);
  CHECK(unitError(3e38, kInf, kBinary32Unit, 1) == kInf);
}

TEST_CASE("judgeOutput finds the worst element and the relative L2 error", "[judge]") {
  const TensorData expected{{4}, {1, 2, 0, 4}};
  const TensorData actual{{4}, {1, 2 + 2 * 10 * kBinary32Unit, 0, 4}};
  const OutputVerdict v = judgeOutput("value", actual, expected, {0, 0, 1, 0});
  CHECK(v.worstIndex == 1);
  CHECK(v.maxUlps == Approx(10));
  CHECK(v.relL2Ulps > 0);
  CHECK(v.relL2Ulps < v.maxUlps);
  CHECK(v.expectedNonzero == 3);
  CHECK(v.zerosWhereNonzero == 0);
  CHECK_FALSE(v.allZero);

  const OutputVerdict wrongShape = judgeOutput("value", TensorData{{2, 2}, actual.values},
                                               expected, {});
  CHECK(wrongShape.shapeMismatch);
  CHECK(wrongShape.maxUlps == kInf);
}

TEST_CASE("a result within its budget passes and one beyond it fails, naming the element",
          "[judge]") {
  const OpInfo& op = *findOp("softmaxLast");
  const TestCase c = softmaxCase({0.5, -1, 2, 0.25, 3});
  const Outcome expected = run(makeReferenceTapeDouble(), c);
  Outcome actual = run(makeReferenceTapeFloat(), c);
  CaseVerdict v = judgeCase(op, c, actual, expected);
  CHECK(v.fwd.status == tapecheck::conformance::Status::Passed);
  REQUIRE(v.bwd);
  CHECK(v.bwd->status == tapecheck::conformance::Status::Passed);

  actual.value.values[2] *= 1 + 200 * kBinary32Unit;
  v = judgeCase(op, c, actual, expected);
  CHECK(v.fwd.status == tapecheck::conformance::Status::Failed);
  CHECK(v.fwd.reason.find("value[2]") != std::string::npos);
  CHECK(v.fwd.maxUlps > v.fwd.budgetUlps);
}

TEST_CASE("a pass's budget share is its worst check over that check's budget", "[judge]") {
  CHECK(budgetShare(0, 0) == 0);
  CHECK(budgetShare(40, 80) == 0.5);
  CHECK(budgetShare(3, 0) == kInf);
  CHECK(budgetShare(kInf, 80) == kInf);

  // A gradient of 20 elements, each off by exactly 10 units of its floor: the element check
  // uses 10 of the budget 32 + sqrt(20), the whole-gradient check (relative L2 error 10) 10 of
  // half that budget, which is the larger share.
  const OpInfo& op = *findOp("softmaxLast");
  std::vector<double> x(20);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = 0.1 * static_cast<double>(i % 7);
  const TestCase c = softmaxCase(x);
  const Outcome expected = run(makeReferenceTapeDouble(), c);
  const Floors floors = op.floors(c, expected);
  Outcome actual = expected;
  std::vector<double>& g = actual.grads.at(0).values;
  for (std::size_t i = 0; i < g.size(); ++i)
    g[i] += 10 * kBinary32Unit * std::max(std::fabs(g[i]), floors.at(1).at(i));
  const CaseVerdict v = judgeCase(op, c, actual, expected);
  REQUIRE(v.bwd);
  const double budget = 32 + std::sqrt(20.0);
  CHECK(v.bwd->budgetUlps == Approx(budget));
  CHECK(v.bwd->status == tapecheck::conformance::Status::Passed);
  CHECK(v.bwd->maxUlps == Approx(10).epsilon(1e-6));
  CHECK(v.bwd->budgetShare == Approx(10 / (0.5 * budget)).epsilon(1e-6));
  CHECK(v.fwd.budgetShare == 0);
}

TEST_CASE("errors must match exactly: the same string, or both succeed", "[judge]") {
  const OpInfo& op = *findOp("softmaxLast");
  const TestCase c = softmaxCase({1, 2});
  Outcome a, e;
  a.error = "autograd: shape mismatch";
  e.error = "autograd: shape mismatch";
  CaseVerdict v = judgeCase(op, c, a, e);
  CHECK(v.errorCase);
  CHECK(v.errors.status == tapecheck::conformance::Status::Passed);

  a.error = "autograd: invalid node id";
  v = judgeCase(op, c, a, e);
  CHECK(v.errors.status == tapecheck::conformance::Status::Failed);
  CHECK(v.errors.reason.find("invalid node id") != std::string::npos);

  const Outcome ok = run(makeReferenceTapeDouble(), c);
  v = judgeCase(op, c, ok, e);
  CHECK(v.errorCase);
  CHECK(v.errors.status == tapecheck::conformance::Status::Failed);
}

TEST_CASE("an output of zeros where the expected one is not is MISTRUSTED", "[judge]") {
  // One dominant logit: every other probability is ~e^-30, far below the row's scale, so zeros
  // are within budget -- but agreement on them proves nothing.
  std::vector<double> x(20, -30.0);
  x[0] = 0;
  const OpInfo& op = *findOp("softmaxLast");
  const TestCase c = softmaxCase(x, false);
  const Outcome expected = run(makeReferenceTapeDouble(), c);
  Outcome actual = expected;
  for (std::size_t i = 1; i < x.size(); ++i) actual.value.values[i] = 0;
  actual.value.values[0] = 1;
  const CaseVerdict v = judgeCase(op, c, actual, expected);
  CHECK(v.fwd.status == tapecheck::conformance::Status::Mistrusted);
  CHECK(v.fwd.reason.find("came back exactly 0") != std::string::npos);
}

TEST_CASE("a pass whose outputs are all zero on both sides is MISTRUSTED", "[judge]") {
  // A row of one: softmax is exactly 1 and its gradient exactly 0.
  const OpInfo& op = *findOp("softmaxLast");
  const TestCase c = softmaxCase({0.75});
  const Outcome expected = run(makeReferenceTapeDouble(), c);
  const CaseVerdict v = judgeCase(op, c, run(makeReferenceTapeFloat(), c), expected);
  CHECK(v.fwd.status == tapecheck::conformance::Status::Passed);
  REQUIRE(v.bwd);
  CHECK(v.bwd->status == tapecheck::conformance::Status::Mistrusted);
}

TEST_CASE("when binary64 says FAILED the multi-precision oracle decides", "[judge]") {
  const OpInfo& op = *findOp("softmaxLast");
  const TestCase c = softmaxCase({0.5, -1, 2, 0.25, 3});
  const Outcome exact = run(makeReferenceTapeOracle(), c);
  // A stand-in binary64 answer that is off (as binary64 is on an ill-conditioned case).
  Outcome off = exact;
  off.value.values[4] *= 1 + 1e-5;
  const TapeFactory oracle = [] { return makeReferenceTapeOracle(); };

  // The kernel agrees with the exact answer: binary64 alone would fail it, the oracle passes it.
  CHECK(judgeCase(op, c, exact, off).fwd.status == tapecheck::conformance::Status::Failed);
  ReferencedVerdict r = judgeWithOracle(op, c, exact, off, oracle);
  CHECK(r.oracleConsulted);
  CHECK(r.verdict.fwd.status == tapecheck::conformance::Status::Passed);

  // A kernel that is wrong stays wrong.
  Outcome wrong = exact;
  wrong.value.values[4] *= 1 + 1e-4;
  r = judgeWithOracle(op, c, wrong, off, oracle);
  CHECK(r.oracleConsulted);
  CHECK(r.verdict.fwd.status == tapecheck::conformance::Status::Failed);

  // Agreement with binary64 needs no oracle.
  r = judgeWithOracle(op, c, exact, exact, oracle);
  CHECK_FALSE(r.oracleConsulted);
}

TEST_CASE("a non-finite mismatch that binary32 itself cannot avoid is MISTRUSTED, not FAILED",
          "[judge]") {
  const OpInfo& op = *findOp("distill");
  const TestCase c = distillAtRangeEdge();
  const TapeFactory oracle = [] { return makeReferenceTapeOracle(); };
  const Outcome ref64 = run(makeReferenceTapeDouble(), c);
  const Outcome ref32 = run(makeReferenceTapeFloat(), c);
  // By hand: the teacher's p[0] = e^-124 / (2 + e^-124), about 1e-54 > 0, meets log q[0] = -inf,
  // so the exact loss is +inf. In binary32, p[0] underflows to 0 and 0 * -inf is NaN.
  REQUIRE(ref64.value.values.size() == 1);
  CHECK(ref64.value.values[0] == kInf);
  CHECK(std::isnan(ref32.value.values[0]));

  // A kernel that computes as binary32 does: not failed, not passed either.
  ReferencedVerdict r = judgeWithOracle(op, c, ref32, ref64, oracle);
  CHECK(r.oracleConsulted);
  CHECK(r.binary32Excused);
  CHECK(r.verdict.fwd.status == tapecheck::conformance::Status::Mistrusted);
  CHECK(r.verdict.fwd.reason.find("value[0] = nan, exact inf, binary32 nan") != std::string::npos);

  // A kernel whose non-finite value binary32 does not give stays FAILED.
  Outcome wrongSign = ref32;
  wrongSign.value.values[0] = -kInf;
  r = judgeWithOracle(op, c, wrongSign, ref64, oracle);
  CHECK_FALSE(r.binary32Excused);
  CHECK(r.verdict.fwd.status == tapecheck::conformance::Status::Failed);

  // And so does a NaN where binary32 has a finite value.
  const TestCase sm = softmaxCase({0.5, -1, 2, 0.25, 3});
  Outcome nan = run(makeReferenceTapeFloat(), sm);
  nan.value.values[2] = kNaN;
  r = judgeWithOracle(*findOp("softmaxLast"), sm, nan, run(makeReferenceTapeDouble(), sm), oracle);
  CHECK_FALSE(r.binary32Excused);
  CHECK(r.verdict.fwd.status == tapecheck::conformance::Status::Failed);
}

TEST_CASE("the dot-product identity accepts true gradients and rejects scaled ones", "[judge]") {
  const OpInfo& op = *findOp("softmaxLast");
  const TestCase c = softmaxCase({0.5, -1, 2, 0.25, 3, -2, 1});
  const TapeFactory ref = [] { return makeReferenceTapeDouble(); };
  const Outcome expected = run(makeReferenceTapeDouble(), c);
  DotCheck d = dotProductCheck(op, c, expected, expected, ref, 42);
  REQUIRE(d.applicable);
  CHECK(d.passed);
  CHECK(d.lhs == Approx(d.rhs).epsilon(1e-9));

  Outcome scaled = expected;
  for (double& g : scaled.grads[0].values) g *= 1.001;
  d = dotProductCheck(op, c, scaled, expected, ref, 42);
  CHECK(d.applicable);
  CHECK_FALSE(d.passed);

  // Not applicable with a non-finite input.
  const TestCase nonFinite = softmaxCase({0.5, -kInf, 2});
  CHECK_FALSE(
      dotProductCheck(op, nonFinite, run(ref(), nonFinite), run(ref(), nonFinite), ref, 1)
          .applicable);
}

TEST_CASE("layerNorm's floor scales with the row's condition max|x| / std", "[judge]") {
  const OpInfo& op = *findOp("layerNorm");
  TestCase c;
  c.op = "layerNorm";
  c.leaves = {{{{1, 4}, {1e4, 1e4 + 1, 1e4 + 2, 1e4 + 3}}, true},
              {{{4}, {1, 1, 1, 1}}, true},
              {{{4}, {0, 0, 0, 0}}, true}};
  c.call = {{"x", 0}, {"gamma", 1}, {"beta", 2}};
  c.attrs.seqLen = 1;
  c.attrs.embedDim = 4;
  const Outcome e = run(makeReferenceTapeDouble(), c);
  const Floors f = op.floors(c, e);
  // std = sqrt(1.25 + 1e-5): the floor is max|x| / std ~ 8944 for every element.
  REQUIRE_FALSE(f.empty());
  CHECK(f[0][0] == Approx((1e4 + 3) / std::sqrt(1.25 + 1e-5)).epsilon(1e-9));
}

namespace {

// The gradient of x equal to the expected one but at element i: `passing` there must pass, and
// 100 ulps of the element's floor off must fail, naming the element.
void checkGradientElementJudged(const OpInfo& op, const TestCase& c, const Outcome& expected,
                                std::size_t i, double passing, double floor) {
  Outcome actual = expected;
  actual.grads[0].values[i] = passing;
  CaseVerdict v = judgeCase(op, c, actual, expected);
  REQUIRE(v.bwd);
  CHECK(v.bwd->status == Status::Passed);

  actual.grads[0].values[i] = expected.grads[0].values[i] + 100 * kBinary32Unit * floor;
  v = judgeCase(op, c, actual, expected);
  REQUIRE(v.bwd);
  CHECK(v.bwd->status == Status::Failed);
  CHECK(v.bwd->reason.find("grad[x][" + std::to_string(i) + "]") != std::string::npos);
}

TestCase logSoftmaxRow(const std::vector<double>& x, const std::vector<double>& dy) {
  return rowCase("logSoftmaxLast", x, dy);
}

}  // namespace

// exp(y_i) below 2^-126 is a binary32 subnormal, known to 2^-150 only; sum(dy) scales that
// absolute error. Both rows were found by the fuzzer (tools/fuzz/regressions/tape/).
TEST_CASE("logSoftmax's gradient floor takes a subnormal probability at 2^-126", "[judge]") {
  const OpInfo& op = *findOp("logSoftmaxLast");
  const double tiny = 4.59177481e-40;  // a binary32 subnormal
  const TestCase c = logSoftmaxRow({2.25, -23.75, 0, -100, tiny, -23.5},
                                   {4.46345174e-38, 0, -100, tiny, -23.5, -23.75});
  const Outcome expected = run(makeReferenceTapeDouble(), c);
  REQUIRE(expected.grads.size() == 1);
  // sum|dy| = 147.25 (+ the two tiny entries); element 3 has |dy_3| = tiny and y_3 ~ -102.4.
  const Floors f = op.floors(c, expected);
  CHECK(f[1][3] == Approx(tiny + kBinary32MinNormal * (147.25 + 4.46345174e-38 + tiny))
                       .epsilon(1e-12));

  // By hand in binary32: exp(-102.44) = 3.24e-45 rounds to 2 * 2^-149 and sum(dy) to -147.25,
  // so dx_3 = tiny + 294.5 * 2^-149 (ATen on the CPU gave 4.59589463e-40, 46 ulps of 2^-149
  // from the exact 4.59654321e-40, which the floor built on exp(y_3) itself judged FAILED).
  const float twoDenormals = 2 * std::numeric_limits<float>::denorm_min();
  const float byHand = static_cast<float>(tiny) + twoDenormals * 147.25f;
  CHECK(byHand == 4.59589463e-40f);
  checkGradientElementJudged(op, c, expected, 3, byHand, f[1][3]);

  // The fuzzer's other row: exp(-97) * 1e7. The binary32 reference tape passes.
  const TestCase spread = logSoftmaxRow({89, -7.99999952, 2}, {1, 0, 1e7});
  const Outcome exact = run(makeReferenceTapeDouble(), spread);
  const CaseVerdict single = judgeCase(op, spread, run(makeReferenceTapeFloat(), spread), exact);
  REQUIRE(single.bwd);
  CHECK(single.bwd->status == Status::Passed);
}

// batchNorm's backward forms g = dy * gamma and mean(g) in binary32; with gamma = 2^-149 they
// are subnormals known to 2^-150 only, and invStd = 1/sqrt(1e-5) of a constant channel scales
// that error by 316. Found by the fuzzer (tools/fuzz/regressions/tape/).
TEST_CASE("normalization gradient floors take subnormal products at 2^-126", "[judge]") {
  const OpInfo& op = *findOp("batchNorm");
  const double d = std::numeric_limits<float>::denorm_min();  // 2^-149
  TestCase c;
  c.op = "batchNorm";
  const Shape s{1, 9};
  c.leaves = {{{s, std::vector<double>(9, d)}, true}, {{{1}, {d}}, true}, {{{1}, {d}}, true}};
  c.call = {{"x", 0}, {"gamma", 1}, {"beta", 2}};
  c.attrs.channels = 1;
  c.attrs.spatial = Shape{9};
  c.upstream = TensorData{s, {4.25, 4.25, 4.25, 4.25, 4.25, 16.5, 16.5, -24, -24}};
  const Outcome expected = run(makeReferenceTapeDouble(), c);
  REQUIRE(expected.grads.size() == 3);
  // A constant channel: xhat = 0, invStd = 1/sqrt(1e-5), max|g| = 24 * 2^-149 < 2^-126.
  const double invStd = 1 / std::sqrt(1e-5);
  const Floors f = op.floors(c, expected);
  CHECK(f[1][7] == Approx(invStd * kBinary32MinNormal * (1 + d * invStd)).epsilon(1e-9));

  // By hand in binary32: g = {4 x5, 16, 16, -24, -24} * 2^-149 (4.25 rounds to 4, 16.5 to even),
  // their mean 4/9 * 2^-149 rounds to 0, so dx_7 = -24 * 2^-149 * invStd, 7589 * 2^-149 after
  // rounding: what ATen on the CPU gave, 220 ulps of the unraised floor from the exact value.
  const float invStdF = 1.0f / std::sqrt(1e-5f);
  const float byHand = -24 * static_cast<float>(d) * invStdF;
  CHECK(byHand == -7589 * static_cast<float>(d));
  checkGradientElementJudged(op, c, expected, 7, byHand, f[1][7]);
}
