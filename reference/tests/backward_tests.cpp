// The tape itself (docs/spec.md#tape): requiresGrad (leaves explicit, OR of parents), dense
// backward (one gradient per node, zeros where nothing flowed, the seed at the output), dropped
// contributions, and accumulation across nodes and chained operations.
#include "test_support.h"

using namespace tct;

namespace {
const long double kLn3 = lnl(3.0L), kLn4 = lnl(4.0L);
}  // namespace

TEMPLATE_TEST_CASE("a leaf requires grad exactly when the caller says so", "[tape]", float,
                   double, Multi) {
  RefTape<TestType> t;
  const NodeId a = leaf(t, {2}, {1, 2}, true);
  const NodeId b = leaf(t, {2}, {1, 2}, false);
  CHECK(t.node(a).requiresGrad);
  CHECK_FALSE(t.node(b).requiresGrad);
  CHECK(t.node(a).name == "leaf");
  CHECK(t.node(a).parents.empty());
  CHECK(a == 0);
  CHECK(b == 1);
  CHECK(t.size() == 2);
}

TEMPLATE_TEST_CASE("an operation requires grad iff one of its parents does", "[tape]", float,
                   double, Multi) {
  for (int mask = 0; mask < 8; ++mask) {
    const bool rx = mask & 1, rg = mask & 2, rb = mask & 4;
    INFO("x " << rx << " gamma " << rg << " beta " << rb);
    RefTape<TestType> t;
    const NodeId x = leaf(t, {2, 2}, {1, 2, 3, 5}, rx);
    const NodeId g = leaf(t, {2}, {1, 1}, rg);
    const NodeId b = leaf(t, {2}, {0, 0}, rb);
    CHECK(t.node(okId(t.layerNorm(2, 2, x, g, b))).requiresGrad == (rx || rg || rb));
    CHECK(t.node(okId(t.batchNorm(2, {2}, x, g, b))).requiresGrad == (rx || rg || rb));
    CHECK(t.node(okId(t.crossEntropy({2, 2}, 1, x, x))).requiresGrad == rx);
    const NodeId y = leaf(t, {2, 2}, {0, 1, 0, 1}, rg);
    CHECK(t.node(okId(t.crossEntropy({2, 2}, 0, x, y))).requiresGrad == (rx || rg));
    // distill: the student's flag only.
    CHECK(t.node(okId(t.distill({2, 2}, 1, x, y))).requiresGrad == rx);
    // One-parent operations follow their parent; topKMask never requires grad.
    CHECK(t.node(okId(t.softmaxLast({2, 2}, x))).requiresGrad == rx);
    CHECK(t.node(okId(t.logSoftmaxLast({2, 2}, x))).requiresGrad == rx);
    CHECK_FALSE(t.node(okId(t.topKMask({2, 2}, 1, x))).requiresGrad);
  }
}

TEMPLATE_TEST_CASE("backward returns one gradient per node with the seed at the output",
                   "[backward]", float, double, Multi) {
  // x (requires grad), c (constant, unused), s = softmax(x). Seed [1, 0, 0] on s:
  //   grads[s] = seed, grads[x] = [5/36, -2/36, -3/36] (softmax worked example),
  //   grads[c] = 0 (nothing flowed).
  RefTape<TestType> t;
  const NodeId x = leaf(t, {3}, {0, ld(lnl(2.0L)), ld(kLn3)}, true);
  const NodeId c = leaf(t, {2, 2}, {1, 2, 3, 4}, true);
  const NodeId s = okId(t.softmaxLast({3}, x));
  const auto g = grads(t, s, {1, 0, 0});
  REQUIRE(g.size() == 3);
  requireExact(g[s], {1, 0, 0});
  requireExact(g[c], {0, 0, 0, 0});
  requireHand<TestType>(g[x], {5.0 / 36, -2.0 / 36, -3.0 / 36});
  // Backward does not change the tape and gives the same answer again.
  CHECK(t.size() == 3);
  requireExact(grads(t, s, {1, 0, 0})[x], g[x]);
}

TEMPLATE_TEST_CASE("nodes above the output keep zero gradients", "[backward]", float, double,
                   Multi) {
  // x -> s = softmax(x) -> l = logSoftmax(s); backward from s: l carries zero, and its pullback
  // adds nothing into s. grads[x] is the softmax pullback of the seed alone.
  RefTape<TestType> t;
  const NodeId x = leaf(t, {3}, {0, ld(lnl(2.0L)), ld(kLn3)}, true);
  const NodeId s = okId(t.softmaxLast({3}, x));
  const NodeId l = okId(t.logSoftmaxLast({3}, s));
  const auto g = grads(t, s, {0, 1, 2});
  requireExact(g[l], {0, 0, 0});
  requireExact(g[s], {0, 1, 2});
  requireHand<TestType>(g[x], {-2.0 / 9, -1.0 / 9, 1.0 / 3});
}

TEMPLATE_TEST_CASE("a node not reached from the output never runs its pullback", "[backward]",
                   float, double, Multi) {
  // x = [0, +inf] gives a = softmax(x) = [NaN, NaN]; z = [1, 2] gives b = softmax(z). Backward
  // from b reaches z only: a's pullback, run on a's zero gradient, would give
  // NaN * (0 - NaN) = NaN in x's gradient. It never runs, so grads[x] stays exactly 0.
  RefTape<TestType> t;
  const NodeId x = leaf(t, {2}, {0, kInf}, true);
  const NodeId z = leaf(t, {2}, {1, 2}, true);
  const NodeId a = okId(t.softmaxLast({2}, x));
  const NodeId b = okId(t.softmaxLast({2}, z));
  requireAllNaN(values(t, a));
  const auto g = grads(t, b, {1, 1});
  requireExact(g[x], {0, 0});
  requireExact(g[a], {0, 0});
  CHECK_FALSE(std::signbit(g[x][0]));
  // softmax's pullback of a constant seed is 0: y * (1 - sum y) with sum y = 1.
  requireHand<TestType>(g[z], {0, 0});
}

TEMPLATE_TEST_CASE("a node above the output never runs", "[backward]", float, double, Multi) {
  // s = softmax(x) is the output; u = logSoftmax(w), w = [0, +inf], is recorded after it. u's
  // value is NaN and its pullback on a zero gradient would give 0 - NaN * 0 = NaN in w's.
  RefTape<TestType> t;
  const NodeId x = leaf(t, {2}, {1, 2}, true);
  const NodeId w = leaf(t, {2}, {0, kInf}, true);
  const NodeId s = okId(t.softmaxLast({2}, x));
  const NodeId u = okId(t.logSoftmaxLast({2}, w));
  requireAllNaN(values(t, u));
  const auto g = grads(t, s, {1, 0});
  requireExact(g[w], {0, 0});
  requireExact(g[u], {0, 0});
  // s = [1/(1+e), e/(1+e)] = [p, q]; seed [1, 0]: dx = [p (1 - p), -q p] = pq [1, -1].
  const long double p = 1 / (1 + std::exp(1.0L)), q = 1 - p;
  requireHand<TestType>(g[x], {ld(p * q), ld(-p * q)});
}

TEMPLATE_TEST_CASE("a tape holding an empty leaf with a dimension of 2^32 cannot be "
                   "differentiated",
                   "[backward]", float, double, Multi) {
  // Backward allocates a zero gradient for every node through numelU32: the [0, 2^33] leaf
  // fails there, whatever the output, even though nothing uses it.
  using Value = typename RefTape<TestType>::Value;
  const std::string big = tapecheck::errors::kTooLarge;
  RefTape<TestType> t;
  const NodeId x = leaf(t, {2, 3}, {1, 2, 3, 4, 5, 6}, true);
  const NodeId w = leaf(t, {0, Dim{1} << 33}, {}, false);
  const NodeId s = okId(t.softmaxLast({2, 3}, x));
  auto fromHost = [&](Shape sh, const Host& v) {
    return Value{std::move(sh), t.backend().fromHost(v).value()};
  };
  auto r = t.backward(s, fromHost({2, 3}, {1, 1, 1, 1, 1, 1}));
  REQUIRE_FALSE(r.ok());
  CHECK(r.message() == big);
  // The output itself: its shape is checked before the seed's length.
  auto r2 = t.backward(w, fromHost({0, Dim{1} << 33}, {}));
  REQUIRE_FALSE(r2.ok());
  CHECK(r2.message() == big);
  auto r3 = t.backward(w, fromHost({0, Dim{1} << 33}, {1}));
  REQUIRE_FALSE(r3.ok());
  CHECK(r3.message() == big);
  // [0, 2^32 - 1] fits: a tape holding it differentiates, its gradient empty.
  RefTape<TestType> t2;
  const NodeId x2 = leaf(t2, {3}, {1, 2, 3}, true);
  const NodeId e2 = leaf(t2, {0, (Dim{1} << 32) - 1}, {}, true);
  const NodeId s2 = okId(t2.softmaxLast({3}, x2));
  const auto g = grads(t2, s2, {0, 0, 0});
  CHECK(g[e2].empty());
}

TEMPLATE_TEST_CASE("a seed on a node that does not require grad goes nowhere", "[backward]",
                   float, double, Multi) {
  RefTape<TestType> t;
  const NodeId x = leaf(t, {3}, {1, 2, 3}, false);
  const NodeId s = okId(t.softmaxLast({3}, x));
  CHECK_FALSE(t.node(s).requiresGrad);
  const auto g = grads(t, s, {1, 2, 3});
  requireExact(g[s], {1, 2, 3});
  requireExact(g[x], {0, 0, 0});
}

TEMPLATE_TEST_CASE("contributions to parents without requiresGrad are dropped", "[backward]",
                   float, double, Multi) {
  // layerNorm worked example (x = [1, 3], eps 3, gamma [1, 1], dy = [1, 0]): dx = [3/16, -3/16],
  // dgamma = [-1/2, 0], dbeta = [1, 0]. gamma does not require grad: its gradient stays 0.
  RefTape<TestType> t;
  const NodeId x = leaf(t, {1, 2}, {1, 3}, true);
  const NodeId g = leaf(t, {2}, {1, 1}, false);
  const NodeId b = leaf(t, {2}, {0, 0}, true);
  const NodeId y = okId(t.layerNorm(1, 2, x, g, b, 3.0));
  const auto gr = grads(t, y, {1, 0});
  requireExact(gr[x], {3.0 / 16, -3.0 / 16});
  requireExact(gr[g], {0, 0});
  requireExact(gr[b], {1, 0});
}

TEMPLATE_TEST_CASE("a leaf used twice by one operation receives both contributions",
                   "[backward][accumulation]", float, double, Multi) {
  // v = [2, 3] as both gamma and beta of layerNorm(x = [[1, 3]], eps 3): xhat = [-1/2, 1/2];
  // dy = [1, 1]: dgamma = [-1/2, 1/2], dbeta = [1, 1], so grads[v] = [1/2, 3/2].
  {
    RefTape<TestType> t;
    const NodeId x = leaf(t, {1, 2}, {1, 3}, false);
    const NodeId v = leaf(t, {2}, {2, 3}, true);
    const NodeId y = okId(t.layerNorm(1, 2, x, v, v, 3.0));
    requireExact(grads(t, y, {1, 1})[v], {0.5, 1.5});
  }
  // x = [0, ln 3] as both logits and target of crossEntropy (one slice, mean):
  //   L(x) = -sum x_i (x_i - lse x) so dL/dx_j = -2 x_j + lse + (sum x) p_j;
  //   lse = ln 4, sum x = ln 3, p = [1/4, 3/4]:
  //   grads[x] = [ln 4 + ln 3 / 4, ln 4 - 5/4 ln 3]
  //   (= dlogits [ln3/4, -ln3/4] + dtarget [ln 4, ln 4 - ln 3]).
  {
    RefTape<TestType> t;
    const NodeId x = leaf(t, {2}, {0, ld(kLn3)}, true);
    const NodeId out = okId(t.crossEntropy({2}, 0, x, x));
    requireHand<TestType>(values(t, out), {ld(kLn3 * (kLn4 - kLn3))});
    requireHand<TestType>(grads(t, out, {1})[x], {ld(kLn4 + kLn3 / 4), ld(kLn4 - 1.25L * kLn3)});
  }
}

TEMPLATE_TEST_CASE("a leaf feeding two operations accumulates both paths",
                   "[backward][accumulation]", float, double, Multi) {
  // x = [0, ln 3]; s = softmax(x) = p = [1/4, 3/4]; l = logSoftmax(x) = log p;
  // out = crossEntropy(logits = l, target = s): logSoftmax(l) = l (l is already normalized),
  // so out = -sum p log p = H(p) = ln 4 - 3/4 ln 3.
  //   dH/dx_j = -p_j (log p_j + H):  j = 0: -1/4 (-ln 4 + H) = 3/16 ln 3;
  //                                  j = 1: -3/4 (ln 3 - ln 4 + H) = -3/16 ln 3.
  //   Through the nodes: grads[s] = -l = [ln 4, ln 4 - ln 3];
  //   grads[l] = softmax(l) * 1 - s = 0; x gets the softmax pullback of grads[s] plus ~0.
  RefTape<TestType> t;
  const NodeId x = leaf(t, {2}, {0, ld(kLn3)}, true);
  const NodeId s = okId(t.softmaxLast({2}, x));
  const NodeId l = okId(t.logSoftmaxLast({2}, x));
  const NodeId out = okId(t.crossEntropy({2}, 0, l, s));
  requireHand<TestType>(values(t, out), {ld(kLn4 - 0.75L * kLn3)});
  const auto g = grads(t, out, {1});
  requireHand<TestType>(g[s], {ld(kLn4), ld(kLn4 - kLn3)});
  requireHand<TestType>(g[l], {0, 0});
  requireHand<TestType>(g[x], {ld(3 * kLn3 / 16), ld(-3 * kLn3 / 16)});
}

TEMPLATE_TEST_CASE("gradients flow through softmax feeding layerNorm", "[backward][chain]", float,
                   double, Multi) {
  // x = [[0, ln 2, ln 3]] -> s = softmax = [1, 2, 3] / 6 -> y = layerNorm(s, gamma 1, beta 0,
  // eps 0) = [-a, 0, a] with a = sqrt(3/2) (layerNorm with eps 0 ignores the scale 1/6).
  // Seed dy = [1, 0, 0]: for [1, 2, 3] dx = a [1/6, -1/3, 1/6]; scaling the input by 1/6
  // multiplies the gradient by 6: grads[s] = a [1, -2, 1].
  // Softmax pullback: dot = a (1/6 - 4/6 + 3/6) = 0, grads[x] = s * grads[s] = a [1/6, -2/3, 1/2].
  const long double a = sqrtl_(1.5L);
  RefTape<TestType> t;
  const NodeId x = leaf(t, {1, 3}, {0, ld(lnl(2.0L)), ld(kLn3)}, true);
  const NodeId s = okId(t.softmaxLast({1, 3}, x));
  const NodeId gm = leaf(t, {3}, {1, 1, 1}, false);
  const NodeId b = leaf(t, {3}, {0, 0, 0}, false);
  const NodeId y = okId(t.layerNorm(1, 3, s, gm, b, 0.0));
  CHECK(t.node(y).requiresGrad);
  // The binary32 chain loses the most: s carries binary32 roundoff and layerNorm divides it
  // by std = 1/(6a); the tolerance scale covers that amplification.
  requireHand<TestType>(values(t, y), {ld(-a), 0, ld(a)}, 8.0);
  const auto g = grads(t, y, {1, 0, 0});
  requireHand<TestType>(g[s], {ld(a), ld(-2 * a), ld(a)}, 8.0);
  requireHand<TestType>(g[x], {ld(a / 6), ld(-2 * a / 3), ld(a / 2)}, 8.0);
  requireExact(g[gm], {0, 0, 0});
}

TEMPLATE_TEST_CASE("gradients flow through log-softmax, batchNorm and crossEntropy",
                   "[backward][chain]", float, double, Multi) {
  // x = [[0, 0], [0, ln 3]] -> l = logSoftmax = [[-ln 2, -ln 2], [-ln 4, ln 3 - ln 4]]
  // -> b = batchNorm(channels 2, spatial [2], gamma [1, 1], beta [0, 0], eps 1):
  //      channel 0 is constant: c = 0, invStd = 1, xhat = [0, 0];
  //      channel 1: c = [-h, h] with h = ln 3 / 2, sigma = sqrt(h^2 + 1), xhat = [-k, k], k = h/sigma.
  // -> out = crossEntropy([2, 2], axis 1, b, target [[1, 0], [0, 1]], mean = false):
  //      row 0: logits [0, 0], -log 1/2 = ln 2; row 1: logits [-k, k], -logp[1] = log(1 + e^-2k).
  // Backward with seed 1:
  //   dtarget = -logp = [ln 2, ln 2, log(1 + e^2k), log(1 + e^-2k)].
  //   db = softmax - target: row 0 [-1/2, 1/2]; row 1 [q, -q] with q = 1/(1 + e^2k).
  //   batchNorm, channel 0: dx = 1 (g - mean g - 0) = [-1/2, 1/2];
  //     channel 1: mean g = 0, mean(g xhat) = -qk, dx = (1/sigma)([q, -q] + [-k, k] q k)
  //     = (q/sigma)(1 - k^2)[1, -1] = (q/sigma^3)[1, -1]   (1 - k^2 = 1/sigma^2).
  //   logSoftmax pullback: both rows of dl sum to 0, so dx = dl.
  //   grads[x] = [-1/2, 1/2, q/sigma^3, -q/sigma^3].
  const long double h = kLn3 / 2, sigma = sqrtl_(h * h + 1), k = h / sigma;
  const long double q = 1 / (1 + std::exp(2 * k)), ln2 = lnl(2.0L);
  RefTape<TestType> t;
  const NodeId x = leaf(t, {2, 2}, {0, 0, 0, ld(kLn3)}, true);
  const NodeId l = okId(t.logSoftmaxLast({2, 2}, x));
  const NodeId gm = leaf(t, {2}, {1, 1}, false);
  const NodeId bt = leaf(t, {2}, {0, 0}, false);
  const NodeId b = okId(t.batchNorm(2, {2}, l, gm, bt, 1.0));
  requireHand<TestType>(values(t, b), {0, 0, ld(-k), ld(k)});
  const NodeId tg = leaf(t, {2, 2}, {1, 0, 0, 1}, true);
  const NodeId out = okId(t.crossEntropy({2, 2}, 1, b, tg, false));
  requireHand<TestType>(values(t, out), {ld(ln2 + std::log1p(std::exp(-2 * k)))});
  const auto g = grads(t, out, {1});
  requireHand<TestType>(g[tg], {ld(ln2), ld(ln2), ld(std::log1p(std::exp(2 * k))),
                                ld(std::log1p(std::exp(-2 * k)))});
  requireHand<TestType>(g[b], {-0.5, 0.5, ld(q), ld(-q)});
  const long double d = q / (sigma * sigma * sigma);
  requireHand<TestType>(g[l], {-0.5, 0.5, ld(d), ld(-d)});
  requireHand<TestType>(g[x], {-0.5, 0.5, ld(d), ld(-d)});
  requireExact(g[gm], {0, 0});
}
