// crossEntropy and distill (docs/spec.md#operations): one-hot and soft targets, weights that do not
// sum to one, mean = false, every axis position, empty tensors, and the teacher as a constant.
#include "test_support.h"

using namespace tct;

namespace {
const long double kLn2 = lnl(2.0L), kLn3 = lnl(3.0L), kLn4 = lnl(4.0L), kLn6 = lnl(6.0L);

struct Loss {
  NodeId a, b, out;
};

template <class S>
Loss crossEntropy(RefTape<S>& t, const Shape& s, std::uint64_t axis, const Host& logits,
                  const Host& target, bool mean) {
  Loss l{};
  l.a = leaf(t, s, logits, true);
  l.b = leaf(t, s, target, true);
  l.out = okId(t.crossEntropy(s, axis, l.a, l.b, mean));
  CHECK(t.node(l.out).name == "cross_entropy");
  CHECK(t.node(l.out).value.shape == Shape{});
  CHECK(t.node(l.out).parents == std::vector<NodeId>{l.a, l.b});
  return l;
}

template <class S>
Loss distill(RefTape<S>& t, const Shape& s, std::uint64_t axis, const Host& student,
             const Host& teacher, bool studentGrad = true, bool teacherGrad = true) {
  Loss l{};
  l.a = leaf(t, s, student, studentGrad);
  l.b = leaf(t, s, teacher, teacherGrad);
  l.out = okId(t.distill(s, axis, l.a, l.b));
  CHECK(t.node(l.out).name == "distill");
  CHECK(t.node(l.out).value.shape == Shape{});
  CHECK(t.node(l.out).requiresGrad == studentGrad);
  return l;
}
}  // namespace

// ------------------------------------------------------------------------------- crossEntropy

TEMPLATE_TEST_CASE("crossEntropy with a one-hot target is -logp at the class", "[cross_entropy]",
                   float, double, Multi) {
  // logits [0, ln 2, ln 3]: logp = [-ln 6, -ln 3, -ln 2]; target [0, 0, 1]; one slice:
  //   loss = ln 2;  dlogits = softmax * 1 - target = [1/6, 1/3, -1/2];  dtarget = -logp.
  RefTape<TestType> t;
  const Loss l = crossEntropy(t, {3}, 0, {0, ld(kLn2), ld(kLn3)}, {0, 0, 1}, true);
  requireHand<TestType>(values(t, l.out), {ld(kLn2)});
  const auto g = grads(t, l.out, {1});
  requireHand<TestType>(g[l.a], {1.0 / 6, 1.0 / 3, -0.5});
  requireHand<TestType>(g[l.b], {ld(kLn6), ld(kLn3), ld(kLn2)});
}

TEMPLATE_TEST_CASE("crossEntropy averages over slices unless mean is false", "[cross_entropy]",
                   float, double, Multi) {
  // Shape [2, 3], axis 1: rows [0, ln 2, ln 3] with target [0, 0, 1] (-logp = ln 2) and
  // [0, 0, 0] with target [1, 0, 0] (-logp = ln 3).
  //   mean = false: loss = ln 2 + ln 3 = ln 6, denom 1;
  //     dlogits = [1/6, 1/3, -1/2, 1/3 - 1, 1/3, 1/3], dtarget = [ln 6, ln 3, ln 2, ln 3 x3].
  //   mean = true: denom = 2 slices; with seed 3 every gradient is scaled by 3/2.
  const Host logits = {0, ld(kLn2), ld(kLn3), 0, 0, 0}, target = {0, 0, 1, 1, 0, 0};
  const Host dlog = {1.0 / 6, 1.0 / 3, -0.5, -2.0 / 3, 1.0 / 3, 1.0 / 3};
  const Host dtar = {ld(kLn6), ld(kLn3), ld(kLn2), ld(kLn3), ld(kLn3), ld(kLn3)};
  {
    RefTape<TestType> t;
    const Loss l = crossEntropy(t, {2, 3}, 1, logits, target, false);
    requireHand<TestType>(values(t, l.out), {ld(kLn6)});
    const auto g = grads(t, l.out, {1});
    requireHand<TestType>(g[l.a], dlog);
    requireHand<TestType>(g[l.b], dtar);
  }
  {
    RefTape<TestType> t;
    const Loss l = crossEntropy(t, {2, 3}, 1, logits, target, true);
    requireHand<TestType>(values(t, l.out), {ld(kLn6 / 2)});
    const auto g = grads(t, l.out, {3});
    Host dl = dlog, dt = dtar;
    for (double& v : dl) v *= 1.5;
    for (double& v : dt) v *= 1.5;
    requireHand<TestType>(g[l.a], dl, 2.0);
    requireHand<TestType>(g[l.b], dt, 2.0);
  }
}

TEMPLATE_TEST_CASE("crossEntropy along axis 0 takes columns as slices", "[cross_entropy]", float,
                   double, Multi) {
  // logits [[0, 0], [ln 3, 0]], target [[1, 0], [0, 1]], axis 0: slices are the columns.
  //   column 0: logits [0, ln 3], logp [-ln 4, ln 3 - ln 4], target [1, 0]: -sum = ln 4.
  //   column 1: logits [0, 0], logp [-ln 2, -ln 2], target [0, 1]: -sum = ln 2.
  //   loss = (ln 4 + ln 2) / 2 = 3/2 ln 2.
  //   dlogits: column 0 [1/4 - 1, 3/4] / 2, column 1 [1/2, 1/2 - 1] / 2, row-major
  //     [[-3/8, 1/4], [3/8, -1/4]];  dtarget = -logp / 2 = [[ln 4, ln 2], [ln 4 - ln 3, ln 2]] / 2.
  RefTape<TestType> t;
  const Loss l = crossEntropy(t, {2, 2}, 0, {0, 0, ld(kLn3), 0}, {1, 0, 0, 1}, true);
  requireHand<TestType>(values(t, l.out), {ld(1.5L * kLn2)});
  const auto g = grads(t, l.out, {1});
  requireHand<TestType>(g[l.a], {-3.0 / 8, 0.25, 3.0 / 8, -0.25});
  requireHand<TestType>(g[l.b], {ld(kLn4 / 2), ld(kLn2 / 2), ld((kLn4 - kLn3) / 2), ld(kLn2 / 2)});
}

TEMPLATE_TEST_CASE("crossEntropy along a middle axis has outer * inner slices", "[cross_entropy]",
                   float, double, Multi) {
  // Shape [2, 2, 2], axis 1: outer 2, n 2, inner 2 -> 4 slices. Each outer block is the [2, 2]
  // case above (its rows are the axis, its columns the inner index), so the summed loss is
  // 2 * 3 ln 2 and the mean divides by 4: 3/2 ln 2; the gradients are those above halved.
  RefTape<TestType> t;
  const Loss l = crossEntropy(t, {2, 2, 2}, 1, {0, 0, ld(kLn3), 0, 0, 0, ld(kLn3), 0},
                              {1, 0, 0, 1, 1, 0, 0, 1}, true);
  requireHand<TestType>(values(t, l.out), {ld(1.5L * kLn2)});
  const auto g = grads(t, l.out, {1});
  requireHand<TestType>(g[l.a], {-3.0 / 16, 1.0 / 8, 3.0 / 16, -1.0 / 8, -3.0 / 16, 1.0 / 8,
                                 3.0 / 16, -1.0 / 8});
  // The last axis of the same tensor: slices of 2 along axis 2, 4 slices.
  //   Slices [0,0] t [1,0] -> ln 2; [ln 3, 0] t [0,1] -> -(0 - ln(1 + 3)) = ln 4; twice each.
  //   loss = 2 (ln 2 + ln 4) / 4 = 3/2 ln 2.
  RefTape<TestType> t2;
  const Loss l2 = crossEntropy(t2, {2, 2, 2}, 2, {0, 0, ld(kLn3), 0, 0, 0, ld(kLn3), 0},
                               {1, 0, 0, 1, 1, 0, 0, 1}, true);
  requireHand<TestType>(values(t2, l2.out), {ld(1.5L * kLn2)});
}

TEMPLATE_TEST_CASE("crossEntropy weights need not sum to one", "[cross_entropy]", float, double,
                   Multi) {
  // logits [0, ln 3]: softmax [1/4, 3/4], logp [-ln 4, ln 3 - ln 4]; target [2, 1], T = 3.
  //   loss = -(2(-ln 4) + (ln 3 - ln 4)) = 3 ln 4 - ln 3.
  //   seed 2: dlogits = 2 (softmax * 3 - target) = 2 [3/4 - 2, 9/4 - 1] = [-5/2, 5/2];
  //           dtarget = -2 logp = [2 ln 4, 2 (ln 4 - ln 3)].
  RefTape<TestType> t;
  const Loss l = crossEntropy(t, {2}, 0, {0, ld(kLn3)}, {2, 1}, true);
  requireHand<TestType>(values(t, l.out), {ld(3 * kLn4 - kLn3)});
  const auto g = grads(t, l.out, {2});
  requireHand<TestType>(g[l.a], {-2.5, 2.5});
  requireHand<TestType>(g[l.b], {ld(2 * kLn4), ld(2 * (kLn4 - kLn3))});
  // A zero target: loss 0, dlogits = softmax * 0 - 0 = 0, dtarget = -logp.
  RefTape<TestType> t2;
  const Loss l2 = crossEntropy(t2, {2}, 0, {0, ld(kLn3)}, {0, 0}, true);
  requireExact(values(t2, l2.out), {0});
  const auto g2 = grads(t2, l2.out, {1});
  requireExact(g2[l2.a], {0, 0});
  requireHand<TestType>(g2[l2.b], {ld(kLn4), ld(kLn4 - kLn3)});
}

TEMPLATE_TEST_CASE("crossEntropy of an empty tensor is -0.0 with empty gradients",
                   "[cross_entropy][edge]", float, double, Multi) {
  struct Case {
    Shape s;
    std::uint64_t axis;
  };
  for (const Case& c : {Case{{0}, 0}, Case{{2, 0}, 0}, Case{{2, 0}, 1}, Case{{0, 3}, 0},
                        Case{{0, 3}, 1}, Case{{2, 0, 4}, 2}}) {
    for (bool mean : {true, false}) {
      INFO("shape " << tapecheck::toString(c.s) << " axis " << c.axis << " mean " << mean);
      RefTape<TestType> t;
      const Loss l = crossEntropy(t, c.s, c.axis, {}, {}, mean);
      // The zero-seeded total of no terms is +0; the loss -total / 1 is -0.0.
      requireExact(values(t, l.out), {0});
      CHECK(std::signbit(values(t, l.out)[0]));
      CHECK(t.node(l.out).requiresGrad);
      const auto g = grads(t, l.out, {1});
      CHECK(g[l.a].empty());
      CHECK(g[l.b].empty());
    }
  }
}

TEMPLATE_TEST_CASE("an all-zero target gives a loss of -0.0", "[cross_entropy][edge]", float,
                   double, Multi) {
  // logits [1, 2, 3], target [0, 0, 0]: every product 0 * logp_j is -0 (logp_j < 0). The Spec's
  // sum starts at +0, so total = +0 and loss = -0.0, for either mean; summed from the first
  // product instead, total would be -0 and the loss +0. dlogits = 0 (T = 0, target 0);
  // dtarget = -logp = log(e + e^2 + e^3) - x_j.
  const long double lse = lnl(std::exp(1.0L) + std::exp(2.0L) + std::exp(3.0L));
  for (bool mean : {true, false}) {
    INFO("mean " << mean);
    RefTape<TestType> t;
    const Loss l = crossEntropy(t, {1, 3}, 1, {1, 2, 3}, {0, 0, 0}, mean);
    const Host v = values(t, l.out);
    requireExact(v, {0});
    CHECK(std::signbit(v[0]));
    const auto g = grads(t, l.out, {1});
    requireExact(g[l.a], {0, 0, 0});
    requireHand<TestType>(g[l.b], {ld(lse - 1), ld(lse - 2), ld(lse - 3)});
  }
  // Along axis 0 of [3, 2], two slices, the same: a zero total is +0 whatever the layout.
  RefTape<TestType> t;
  const Loss l = crossEntropy(t, {3, 2}, 0, {1, 4, 2, 5, 3, 6}, {0, 0, 0, 0, 0, 0}, true);
  CHECK(std::signbit(values(t, l.out)[0]));
}

TEMPLATE_TEST_CASE("crossEntropy drops the contribution of a parent without requiresGrad",
                   "[cross_entropy][grad]", float, double, Multi) {
  // Same one-hot case; only the target requires grad: dlogits is computed but dropped.
  RefTape<TestType> t;
  const NodeId a = leaf(t, {3}, {0, ld(kLn2), ld(kLn3)}, false);
  const NodeId b = leaf(t, {3}, {0, 0, 1}, true);
  const NodeId out = okId(t.crossEntropy({3}, 0, a, b));
  CHECK(t.node(out).requiresGrad);
  const auto g = grads(t, out, {1});
  requireExact(g[a], {0, 0, 0});
  requireHand<TestType>(g[b], {ld(kLn6), ld(kLn3), ld(kLn2)});
  // Neither requires grad: the node does not either, nothing flows.
  RefTape<TestType> t2;
  const NodeId a2 = leaf(t2, {3}, {0, 1, 2}, false);
  const NodeId b2 = leaf(t2, {3}, {0, 0, 1}, false);
  const NodeId out2 = okId(t2.crossEntropy({3}, 0, a2, b2));
  CHECK_FALSE(t2.node(out2).requiresGrad);
  const auto g2 = grads(t2, out2, {1});
  requireExact(g2[a2], {0, 0, 0});
  requireExact(g2[b2], {0, 0, 0});
}

// ------------------------------------------------------------------------------------ distill

TEMPLATE_TEST_CASE("distill of equal student and teacher is the teacher's entropy, gradient 0",
                   "[distill]", float, double, Multi) {
  // p = softmax([0, ln 2, ln 3]) = [1/6, 1/3, 1/2]; loss = -sum p log p
  //   = (1/6) ln 6 + (1/3) ln 3 + (1/2) ln 2;  dstudent = softmax(student) * 1 - p = 0.
  RefTape<TestType> t;
  const Host z = {0, ld(kLn2), ld(kLn3)};
  const Loss l = distill(t, {3}, 0, z, z);
  requireHand<TestType>(values(t, l.out), {ld(kLn6 / 6 + kLn3 / 3 + kLn2 / 2)});
  const auto g = grads(t, l.out, {1});
  requireHand<TestType>(g[l.a], {0, 0, 0});
  requireExact(g[l.b], {0, 0, 0});  // the teacher requires grad but is a constant
}

TEMPLATE_TEST_CASE("distill's value and student gradient, worked by hand", "[distill]", float,
                   double, Multi) {
  // student [0, 0] (q = [1/2, 1/2]), teacher [0, ln 3] (p = [1/4, 3/4]):
  //   loss = -(1/4 + 3/4)(-ln 2) = ln 2;  dstudent = q - p = [1/4, -1/4]; seed 4: [1, -1].
  RefTape<TestType> t;
  const Loss l = distill(t, {2}, 0, {0, 0}, {0, ld(kLn3)});
  requireHand<TestType>(values(t, l.out), {ld(kLn2)});
  const auto g = grads(t, l.out, {4});
  requireHand<TestType>(g[l.a], {1, -1});
  requireExact(g[l.b], {0, 0});
}

TEMPLATE_TEST_CASE("distill averages over slices along any axis", "[distill]", float, double,
                   Multi) {
  // Shape [2, 2], student all 0. Axis 1: teacher rows [0, ln 3] and [0, 0]:
  //   each slice's loss is ln 2, mean ln 2; dstudent = [[1/4, -1/4], [0, 0]] / 2.
  {
    RefTape<TestType> t;
    const Loss l = distill(t, {2, 2}, 1, {0, 0, 0, 0}, {0, ld(kLn3), 0, 0});
    requireHand<TestType>(values(t, l.out), {ld(kLn2)});
    requireHand<TestType>(grads(t, l.out, {1})[l.a], {0.125, -0.125, 0, 0});
  }
  // Axis 0: teacher columns [0, ln 3] and [0, 0] (row-major [[0, 0], [ln 3, 0]]):
  //   dstudent = [[1/8, 0], [-1/8, 0]].
  {
    RefTape<TestType> t;
    const Loss l = distill(t, {2, 2}, 0, {0, 0, 0, 0}, {0, 0, ld(kLn3), 0});
    requireHand<TestType>(values(t, l.out), {ld(kLn2)});
    requireHand<TestType>(grads(t, l.out, {1})[l.a], {0.125, 0, -0.125, 0});
  }
}

TEMPLATE_TEST_CASE("distill's teacher never receives a gradient", "[distill][grad]", float,
                   double, Multi) {
  // The node's parents are the student only, and requiresGrad is the student's.
  {
    RefTape<TestType> t;
    const Loss l = distill(t, {2}, 0, {0, 0}, {0, ld(kLn3)}, /*student*/ false, /*teacher*/ true);
    CHECK(t.node(l.out).parents == std::vector<NodeId>{l.a});
    const auto g = grads(t, l.out, {1});
    requireExact(g[l.a], {0, 0});
    requireExact(g[l.b], {0, 0});
  }
  // One leaf as both student and teacher: only the student path is differentiated, so the
  // gradient is softmax(x) - softmax(x) = 0, not the entropy's derivative
  // (which at x = [0, ln 3] would be [3/16 ln 3, -3/16 ln 3]).
  {
    RefTape<TestType> t;
    const NodeId x = leaf(t, {2}, {0, ld(kLn3)}, true);
    const NodeId out = okId(t.distill({2}, 0, x, x));
    CHECK(t.node(out).requiresGrad);
    requireHand<TestType>(grads(t, out, {1})[x], {0, 0});
  }
}

TEMPLATE_TEST_CASE("distill of an empty tensor is -0.0 with an empty gradient", "[distill][edge]",
                   float, double, Multi) {
  for (const Shape& s : {Shape{0}, Shape{2, 0}, Shape{0, 3}, Shape{2, 0, 4}}) {
    INFO("shape " << tapecheck::toString(s));
    for (bool studentGrad : {true, false}) {
      RefTape<TestType> t;
      const Loss l = distill(t, s, 0, {}, {}, studentGrad, true);
      requireExact(values(t, l.out), {0});
      CHECK(std::signbit(values(t, l.out)[0]));
      const auto g = grads(t, l.out, {1});
      CHECK(g[l.a].empty());
      CHECK(g[l.b].empty());
    }
  }
}
