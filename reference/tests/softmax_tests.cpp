// softmaxLast and logSoftmaxLast (docs/spec.md#operations): hand-derived values and gradients, and
// every edge case the spec names (empty tensors, the scalar, rows of one entry, non-finite rows).
#include "test_support.h"

using namespace tct;

namespace {
const long double kLn2 = lnl(2.0L), kLn3 = lnl(3.0L), kLn4 = lnl(4.0L), kLn6 = lnl(6.0L);
}  // namespace

TEMPLATE_TEST_CASE("softmax of [0, ln 2, ln 3] is [1/6, 2/6, 3/6]", "[softmax]", float, double,
                   Multi) {
  // exp(x) = [1, 2, 3] and their sum is 6.
  RefTape<TestType> t;
  const NodeId x = leaf(t, {3}, {0.0, ld(kLn2), ld(kLn3)}, false);
  const NodeId y = okId(t.softmaxLast({3}, x));
  CHECK(t.node(y).name == "softmax");
  CHECK(t.node(y).value.shape == Shape{3});
  requireHand<TestType>(values(t, y), {1.0 / 6, 2.0 / 6, 3.0 / 6});
}

TEMPLATE_TEST_CASE("log-softmax of [0, ln 2, ln 3] is [-ln 6, -ln 3, -ln 2]", "[softmax]", float,
                   double, Multi) {
  // log(k/6) = ln k - ln 6 for k = 1, 2, 3.
  RefTape<TestType> t;
  const NodeId x = leaf(t, {3}, {0.0, ld(kLn2), ld(kLn3)}, false);
  const NodeId y = okId(t.logSoftmaxLast({3}, x));
  CHECK(t.node(y).name == "log_softmax");
  requireHand<TestType>(values(t, y), {ld(-kLn6), ld(-kLn3), ld(-kLn2)});
}

TEMPLATE_TEST_CASE("softmax and log-softmax normalize each row of a rank-3 tensor on its own",
                   "[softmax]", float, double, Multi) {
  // Shape [2,1,2] folds to rows [0, 0] and [0, ln 3]:
  //   softmax: [1/2, 1/2] and [1/4, 3/4];  log-softmax: [-ln 2, -ln 2] and [-ln 4, ln 3 - ln 4].
  RefTape<TestType> t;
  const Shape s{2, 1, 2};
  const NodeId x = leaf(t, s, {0.0, 0.0, 0.0, ld(kLn3)}, false);
  requireHand<TestType>(values(t, okId(t.softmaxLast(s, x))), {0.5, 0.5, 0.25, 0.75});
  requireHand<TestType>(values(t, okId(t.logSoftmaxLast(s, x))),
                        {ld(-kLn2), ld(-kLn2), ld(-kLn4), ld(kLn3 - kLn4)});
}

TEMPLATE_TEST_CASE("softmax subtracts the row maximum, so large logits do not overflow",
                   "[softmax]", float, double, Multi) {
  // Four equal logits of 1000 (exp(1000) overflows binary64): each gets 1/4, log 1/4 = -ln 4.
  // [1000, 0]: exp(-1000) underflows to 0 in binary32/64 and rounds to 0 from Multi, so
  // softmax = [1, 0] and log-softmax = [-log(1 + e^-1000), -1000] = [-0, -1000] after rounding.
  RefTape<TestType> t;
  const NodeId x = leaf(t, {4}, {1000.0, 1000.0, 1000.0, 1000.0}, false);
  requireExact(values(t, okId(t.softmaxLast({4}, x))), {0.25, 0.25, 0.25, 0.25});
  requireHand<TestType>(values(t, okId(t.logSoftmaxLast({4}, x))),
                        {ld(-kLn4), ld(-kLn4), ld(-kLn4), ld(-kLn4)});
  const NodeId z = leaf(t, {2}, {1000.0, 0.0}, false);
  requireExact(values(t, okId(t.softmaxLast({2}, z))), {1.0, 0.0});
  requireHand<TestType>(values(t, okId(t.logSoftmaxLast({2}, z))), {0.0, -1000.0});
}

TEMPLATE_TEST_CASE("softmax's gradient matches y * (dy - sum dy*y) worked by hand", "[softmax]",
                   float, double, Multi) {
  // y = [1/6, 2/6, 3/6].
  //  dy = [1,0,0]: sum dy*y = 1/6; dx = [1/6*5/6, 2/6*(-1/6), 3/6*(-1/6)] = [5/36, -2/36, -3/36].
  //  dy = [0,1,2]: sum dy*y = 2/6 + 6/6 = 4/3; dx = [-4/18, -2/18, 6/18] = [-2/9, -1/9, 1/3].
  //  dy = [1,1,1]: sum = 1, dx = 0 (softmax is invariant to adding a constant).
  RefTape<TestType> t;
  const NodeId x = leaf(t, {3}, {0.0, ld(kLn2), ld(kLn3)}, true);
  const NodeId y = okId(t.softmaxLast({3}, x));
  CHECK(t.node(y).requiresGrad);
  requireHand<TestType>(grads(t, y, {1, 0, 0})[x], {5.0 / 36, -2.0 / 36, -3.0 / 36});
  requireHand<TestType>(grads(t, y, {0, 1, 2})[x], {-2.0 / 9, -1.0 / 9, 1.0 / 3});
  requireHand<TestType>(grads(t, y, {1, 1, 1})[x], {0, 0, 0});
}

TEMPLATE_TEST_CASE("log-softmax's gradient matches dy - exp(y) * sum dy worked by hand",
                   "[softmax]", float, double, Multi) {
  // exp(y) = [1/6, 2/6, 3/6].
  //  dy = [1,0,0]: sum = 1, dx = [1 - 1/6, -2/6, -3/6] = [5/6, -1/3, -1/2].
  //  dy = [0,1,2]: sum = 3, dx = [0 - 1/2, 1 - 1, 2 - 3/2] = [-1/2, 0, 1/2].
  RefTape<TestType> t;
  const NodeId x = leaf(t, {3}, {0.0, ld(kLn2), ld(kLn3)}, true);
  const NodeId y = okId(t.logSoftmaxLast({3}, x));
  requireHand<TestType>(grads(t, y, {1, 0, 0})[x], {5.0 / 6, -1.0 / 3, -0.5});
  requireHand<TestType>(grads(t, y, {0, 1, 2})[x], {-0.5, 0.0, 0.5});
}

TEMPLATE_TEST_CASE("softmax and log-softmax gradients are computed row by row", "[softmax]",
                   float, double, Multi) {
  // Rows [0,0] (y = [1/2,1/2]) and [0, ln 3] (y = [1/4, 3/4]); dy = [[1,0],[0,1]].
  //  softmax: row 0: dot = 1/2, dx = [1/2*1/2, 1/2*(-1/2)] = [1/4, -1/4];
  //           row 1: dot = 3/4, dx = [1/4*(-3/4), 3/4*(1/4)] = [-3/16, 3/16].
  //  log-softmax: row 0: sum = 1, dx = [1 - 1/2, -1/2]; row 1: dx = [-1/4, 1 - 3/4].
  RefTape<TestType> t;
  const NodeId x = leaf(t, {2, 2}, {0.0, 0.0, 0.0, ld(kLn3)}, true);
  const NodeId s = okId(t.softmaxLast({2, 2}, x));
  const NodeId l = okId(t.logSoftmaxLast({2, 2}, x));
  requireHand<TestType>(grads(t, s, {1, 0, 0, 1})[x], {0.25, -0.25, -3.0 / 16, 3.0 / 16});
  requireHand<TestType>(grads(t, l, {1, 0, 0, 1})[x], {0.5, -0.5, -0.25, 0.25});
}

TEMPLATE_TEST_CASE("empty tensors of every rank are copied forward and backward", "[softmax][edge]",
                   float, double, Multi) {
  // SPEC: size(s) == 0 -> the value is a copy of x (shape kept) and the pullback copies the
  // upstream gradient (an empty buffer). requiresGrad still follows the parent.
  for (const Shape& s : {Shape{0}, Shape{2, 0}, Shape{0, 3}, Shape{2, 0, 4}}) {
    INFO("shape " << tapecheck::toString(s));
    for (bool rg : {true, false}) {
      RefTape<TestType> t;
      const NodeId x = leaf(t, s, {}, rg);
      const NodeId y = okId(t.softmaxLast(s, x));
      const NodeId l = okId(t.logSoftmaxLast(s, x));
      for (NodeId id : {y, l}) {
        CHECK(t.node(id).value.shape == s);
        CHECK(t.node(id).value.data.size() == 0);
        CHECK(t.node(id).requiresGrad == rg);
        CHECK(t.node(id).parents == std::vector<NodeId>{x});
        const auto g = grads(t, id, {});
        CHECK(g[x].empty());
        CHECK(g[id].empty());
        // The pullback itself: one contribution, a copy of the (empty) upstream.
        auto c = t.node(id).pullback(t.backend(), Buf<TestType>(0));
        REQUIRE(c.ok());
        REQUIRE(c.value().size() == 1);
        CHECK(c.value()[0].size() == 0);
      }
    }
  }
}

TEMPLATE_TEST_CASE("the scalar's softmax is 1 and its log-softmax 0, with zero gradient",
                   "[softmax][edge]", float, double, Multi) {
  // SPEC: s == [] -> value 1 (softmax) or 0 (log-softmax), whatever x holds; zero gradient.
  for (double v : {3.7, -1e30, kNaN, kInf}) {
    INFO("x = " << v);
    RefTape<TestType> t;
    const NodeId x = leaf(t, {}, {v}, true);
    const NodeId y = okId(t.softmaxLast({}, x));
    const NodeId l = okId(t.logSoftmaxLast({}, x));
    CHECK(t.node(y).value.shape == Shape{});
    requireExact(values(t, y), {1.0});
    requireExact(values(t, l), {0.0});
    CHECK(t.node(y).requiresGrad);
    CHECK(t.node(l).requiresGrad);
    requireExact(grads(t, y, {5.0})[x], {0.0});
    requireExact(grads(t, l, {-2.5})[x], {0.0});
  }
}

TEMPLATE_TEST_CASE("a row of one finite entry gives exactly 1 and 0 and a zero gradient",
                   "[softmax][edge]", float, double, Multi) {
  // exp(x - x) / exp(x - x) = 1; (x - x) - log(exp(0)) = 0;
  // softmax dx = 1 * (dy - dy * 1) = 0; log-softmax dx = dy - exp(0) * dy = 0.
  for (const Shape& s : {Shape{1}, Shape{4, 1}, Shape{2, 2, 1}}) {
    INFO("shape " << tapecheck::toString(s));
    const std::size_t n = tapecheck::sizeOf(s);
    const Host xs = Host{5.0, -1e30, 0.0, 1e30}, seedAll = Host{2.0, 3.0, -4.0, 0.5};
    RefTape<TestType> t;
    const NodeId x = leaf(t, s, Host(xs.begin(), xs.begin() + n), true);
    const NodeId y = okId(t.softmaxLast(s, x));
    const NodeId l = okId(t.logSoftmaxLast(s, x));
    requireExact(values(t, y), Host(n, 1.0));
    requireExact(values(t, l), Host(n, 0.0));
    const Host seed(seedAll.begin(), seedAll.begin() + n);
    requireExact(grads(t, y, seed)[x], zeros(n));
    requireExact(grads(t, l, seed)[x], zeros(n));
  }
}

TEMPLATE_TEST_CASE("rows holding NaN, +inf or only -inf become all NaN, other rows unaffected",
                   "[softmax][edge]", float, double, Multi) {
  // m = NaN (anywhere in the row) or +inf (x - m = inf - inf = NaN) or -inf (-inf - -inf = NaN):
  // every entry is NaN. The last row is finite and must stay [1/3, 1/3, 1/3].
  const Host xs = {1,    kNaN,  2,      //
                   kNaN, 1,     2,      //
                   1,    2,     kNaN,   //
                   1,    kInf,  2,      //
                   -kInf, -kInf, -kInf, //
                   kInf, -kInf, 0,      //
                   kInf, kInf,  kInf,   //
                   0,    0,     0};
  const Shape s{8, 3};
  RefTape<TestType> t;
  const NodeId x = leaf(t, s, xs, true);
  const NodeId y = okId(t.softmaxLast(s, x));
  const NodeId l = okId(t.logSoftmaxLast(s, x));
  for (NodeId id : {y, l}) {
    const Host v = values(t, id);
    requireAllNaN(Host(v.begin(), v.begin() + 21));
  }
  const Host yv = values(t, y);
  requireHand<TestType>(Host(yv.begin() + 21, yv.end()), {1.0 / 3, 1.0 / 3, 1.0 / 3});
  const Host lv = values(t, l);
  requireHand<TestType>(Host(lv.begin() + 21, lv.end()), {ld(-kLn3), ld(-kLn3), ld(-kLn3)});
  // The gradient of a NaN row is NaN (y is NaN); the finite row's is y * (dy - dot).
  const Host g = grads(t, y, Host(24, 1.0))[x];
  requireAllNaN(Host(g.begin(), g.begin() + 21));
  requireHand<TestType>(Host(g.begin() + 21, g.end()), {0, 0, 0});
  // Single-entry rows that are not finite are NaN too (they hold NaN, +inf, or only -inf).
  for (double v : {kNaN, kInf, -kInf}) {
    RefTape<TestType> t1;
    const NodeId x1 = leaf(t1, {1}, {v}, false);
    requireAllNaN(values(t1, okId(t1.softmaxLast({1}, x1))));
    requireAllNaN(values(t1, okId(t1.logSoftmaxLast({1}, x1))));
  }
}

TEMPLATE_TEST_CASE("entries of -inf next to a finite maximum give 0 and -inf", "[softmax][edge]",
                   float, double, Multi) {
  // Row [-inf, 0, ln 3]: m = ln 3, exp(x - m) = [0, 1/3, 1], sum 4/3:
  //   softmax = [0, 1/4, 3/4], log-softmax = [-inf, -ln 4, ln 3 - ln 4].
  // Gradient with dy = [1, 2, 3]:
  //   softmax: dot = 2/4 + 9/4 = 11/4, dx = [0, 1/4*(2 - 11/4), 3/4*(3 - 11/4)] = [0, -3/16, 3/16].
  //   log-softmax: sum = 6, dx = [1 - 0*6, 2 - 6/4, 3 - 18/4] = [1, 1/2, -3/2].
  RefTape<TestType> t;
  const NodeId x = leaf(t, {3}, {-kInf, 0.0, ld(kLn3)}, true);
  const NodeId y = okId(t.softmaxLast({3}, x));
  const NodeId l = okId(t.logSoftmaxLast({3}, x));
  const Host yv = values(t, y), lv = values(t, l);
  CHECK(yv[0] == 0.0);
  CHECK(lv[0] == -kInf);
  requireHand<TestType>(yv, {0.0, 0.25, 0.75});
  requireHand<TestType>(lv, {-kInf, ld(-kLn4), ld(kLn3 - kLn4)});
  const Host gy = grads(t, y, {1, 2, 3})[x];
  CHECK(gy[0] == 0.0);
  requireHand<TestType>(gy, {0.0, -3.0 / 16, 3.0 / 16});
  requireHand<TestType>(grads(t, l, {1, 2, 3})[x], {1.0, 0.5, -1.5});
}
