// layerNorm and batchNorm (docs/spec.md#operations): hand-derived values and gradients, epsilon
// (default, zero, negative), the second centering, spatial = [] and rank-3 spatial shapes.
#include "test_support.h"

using namespace tct;

namespace {
// a = sqrt(3/2): xhat of [1, 2, 3] with eps 0 is [-a, 0, a] (mean 2, c = [-1, 0, 1],
// var = 2/3, std = sqrt(2/3) = 1/a).
const long double kA = sqrtl_(1.5L);

struct Norm {
  NodeId x, gamma, beta, y;
};

template <class S>
Norm layerNorm(RefTape<S>& t, std::uint64_t seq, std::uint64_t embed, const Host& x,
               const Host& gamma, const Host& beta, double eps) {
  Norm n{};
  n.x = leaf(t, {seq, embed}, x, true);
  n.gamma = leaf(t, {embed}, gamma, true);
  n.beta = leaf(t, {embed}, beta, true);
  n.y = okId(t.layerNorm(seq, embed, n.x, n.gamma, n.beta, eps));
  CHECK(t.node(n.y).name == "layer_norm");
  CHECK(t.node(n.y).value.shape == Shape{seq, embed});
  CHECK(t.node(n.y).parents == std::vector<NodeId>{n.x, n.gamma, n.beta});
  return n;
}

template <class S>
Norm batchNorm(RefTape<S>& t, std::uint64_t channels, const Shape& spatial, const Host& x,
               const Host& gamma, const Host& beta, double eps) {
  Shape xs{channels};
  xs.insert(xs.end(), spatial.begin(), spatial.end());
  Norm n{};
  n.x = leaf(t, xs, x, true);
  n.gamma = leaf(t, {channels}, gamma, true);
  n.beta = leaf(t, {channels}, beta, true);
  n.y = okId(t.batchNorm(channels, spatial, n.x, n.gamma, n.beta, eps));
  CHECK(t.node(n.y).name == "batch_norm");
  CHECK(t.node(n.y).value.shape == xs);
  return n;
}
}  // namespace

// ---------------------------------------------------------------------------------- layerNorm

TEMPLATE_TEST_CASE("layerNorm of [1,2,3] with gamma 1, beta 0, eps 0 is [-sqrt(3/2), 0, sqrt(3/2)]",
                   "[layer_norm]", float, double, Multi) {
  RefTape<TestType> t;
  const Norm n = layerNorm(t, 1, 3, {1, 2, 3}, {1, 1, 1}, {0, 0, 0}, 0.0);
  requireHand<TestType>(values(t, n.y), {ld(-kA), 0.0, ld(kA)});
}

TEMPLATE_TEST_CASE("layerNorm scales by gamma and shifts by beta per column", "[layer_norm]",
                   float, double, Multi) {
  // xhat = [-a, 0, a]; gamma = [2, 1, -1], beta = [1/2, 0, 1]: y = [-2a + 1/2, 0, -a + 1].
  RefTape<TestType> t;
  const Norm n = layerNorm(t, 1, 3, {1, 2, 3}, {2, 1, -1}, {0.5, 0, 1}, 0.0);
  requireHand<TestType>(values(t, n.y), {ld(-2 * kA + 0.5L), 0.0, ld(1 - kA)});
}

TEMPLATE_TEST_CASE("layerNorm adds epsilon under the square root, row by row", "[layer_norm]",
                   float, double, Multi) {
  // Row [1, 3]: mean 2, c = [-1, 1], var 1; eps 3 -> std 2, xhat = [-1/2, 1/2].
  // Row [10, 10]: c = 0, xhat = 0 / sqrt(3) = 0, so y = beta.
  // gamma = [2, 3], beta = [7, -1]: row 0 y = [-1 + 7, 3/2 - 1] = [6, 1/2]; row 1 y = [7, -1].
  RefTape<TestType> t;
  const Norm n = layerNorm(t, 2, 2, {1, 3, 10, 10}, {2, 3}, {7, -1}, 3.0);
  requireExact(values(t, n.y), {6, 0.5, 7, -1});
}

TEMPLATE_TEST_CASE("layerNorm's default epsilon is 1e-5", "[layer_norm]", float, double, Multi) {
  // Row [1, 3]: var 1, xhat = [-1, 1] / sqrt(1 + 1e-5).
  RefTape<TestType> t;
  const NodeId x = leaf(t, {1, 2}, {1, 3}, false);
  const NodeId g = leaf(t, {2}, {1, 1}, false);
  const NodeId b = leaf(t, {2}, {0, 0}, false);
  const NodeId y = okId(t.layerNorm(1, 2, x, g, b));
  const long double v = 1 / sqrtl_(1 + 1e-5L);
  requireHand<TestType>(values(t, y), {ld(-v), ld(v)});
  // A constant row gives xhat = 0 / sqrt(1e-5) = 0 exactly: y = beta.
  const NodeId xc = leaf(t, {1, 2}, {4, 4}, false);
  const NodeId bc = leaf(t, {2}, {0.25, -3}, false);
  requireExact(values(t, okId(t.layerNorm(1, 2, xc, g, bc))), {0.25, -3});
}

TEMPLATE_TEST_CASE("layerNorm's formula holds on a mean-shifted row", "[layer_norm]", float,
                   double, Multi) {
  // [2^20 + 1, 2^20 + 2, 2^20 + 3]: every sum is exact in binary32 (< 2^24), mean 2^20 + 2,
  // c = [-1, 0, 1]: the same xhat as [1, 2, 3], [-a, 0, a].
  const double m = 1048576.0;
  RefTape<TestType> t;
  const Norm n = layerNorm(t, 1, 3, {m + 1, m + 2, m + 3}, {1, 1, 1}, {0, 0, 0}, 0.0);
  requireHand<TestType>(values(t, n.y), {ld(-kA), 0.0, ld(kA)});
}

TEMPLATE_TEST_CASE("layerNorm centers twice: the rounding error of the mean does not enter var",
                   "[layer_norm][centering]", float, double) {
  // With e the machine epsilon of the scalar (2^-23 or 2^-52), N = 4, eps = 0 and
  // x = [1, 1, 1, 1 + e], worked in the scalar's own arithmetic:
  //   sum x = 4 + e rounds to 4 (e is a quarter ulp of 4), whatever the summation order,
  //   mean = 1, c = [0, 0, 0, e] exactly, mean(c) = e/4 exactly,
  //   double centering: varRaw = ((e/4)^2 * 3 + (3e/4)^2) / 4 = 3 e^2 / 16 exactly,
  //     std = sqrt(3) e / 4, xhat = [0, 0, 0, 4 / sqrt(3)];
  //   single centering would give var = e^2 / 4, std = e / 2, xhat[3] = 2.
  const double e = std::numeric_limits<TestType>::epsilon();
  RefTape<TestType> t;
  const Norm n = layerNorm(t, 1, 4, {1, 1, 1, 1 + e}, {1, 1, 1, 1}, {0, 0, 0, 0}, 0.0);
  const Host y = values(t, n.y);
  CHECK(y[0] == 0.0);
  CHECK(y[1] == 0.0);
  CHECK(y[2] == 0.0);
  requireHand<TestType>(y, {0, 0, 0, ld(4 / sqrtl_(3.0L))}, 0.0);
}

TEST_CASE("layerNorm in Multi gives the real-number value where binary64 rounds the mean",
          "[layer_norm][centering]") {
  // The same rows in 128 bits: the sums are exact, mean = 1 + e/4, c = [-e/4, -e/4, -e/4, 3e/4],
  // var = 3 e^2 / 16, xhat = c / (sqrt(3) e / 4) = [-1/sqrt(3), -1/sqrt(3), -1/sqrt(3), sqrt(3)].
  for (double e : {0x1p-23, 0x1p-52}) {
    RefTape<Multi> t;
    const Norm n = layerNorm(t, 1, 4, {1, 1, 1, 1 + e}, {1, 1, 1, 1}, {0, 0, 0, 0}, 0.0);
    const long double r = 1 / sqrtl_(3.0L);
    requireHand<Multi>(values(t, n.y), {ld(-r), ld(-r), ld(-r), ld(sqrtl_(3.0L))});
  }
}

TEMPLATE_TEST_CASE("layerNorm with a negative epsilon is not rejected", "[layer_norm][edge]",
                   float, double, Multi) {
  // [1, 2, 3], eps = -1: var + eps = 2/3 - 1 < 0, so std = sqrt(max(-1/3, 0)) = 0:
  // c = [-1, 0, 1] gives xhat = [-inf, 0/0 = NaN, +inf]. dy = [1, 0, 0]: g = [1, 0, 0],
  // mean(g * xhat) = (-inf + NaN + 0 * inf) / 3 = NaN, so every dx is NaN.
  RefTape<TestType> t;
  const Norm n = layerNorm(t, 1, 3, {1, 2, 3}, {1, 1, 1}, {0, 0, 0}, -1.0);
  requireExact(values(t, n.y), {-kInf, kNaN, kInf});
  requireAllNaN(grads(t, n.y, {1, 0, 0})[n.x]);
  // [1, 3], eps = -3/4: var + eps = 1/4 > 0, std 1/2, xhat = [-2, 2]: computed as usual.
  RefTape<TestType> t2;
  const Norm n2 = layerNorm(t2, 1, 2, {1, 3}, {1, 1}, {0, 0}, -0.75);
  requireExact(values(t2, n2.y), {-2, 2});
}

TEMPLATE_TEST_CASE("var + epsilon below zero gives std = 0: a non-constant row is +-inf, a "
                   "constant row NaN",
                   "[layer_norm][edge]", float, double, Multi) {
  // The Spec's square root is sqrt(max(d, 0)). x = [1, 3], eps = -2: c = [-1, 1], var = 1,
  // var + eps = -1, std = 0, invStd = +inf: y = xhat = [-inf, +inf]. dy = [1, 1]: g = [1, 1],
  // mean g = 1, mean(g * xhat) = (-inf + inf) / 2 = NaN: dx = [NaN, NaN];
  // dgamma = dy * xhat = [-inf, +inf]; dbeta = [1, 1].
  RefTape<TestType> t;
  const Norm n = layerNorm(t, 1, 2, {1, 3}, {1, 1}, {0, 0}, -2.0);
  requireExact(values(t, n.y), {-kInf, kInf});
  const auto g = grads(t, n.y, {1, 1});
  requireAllNaN(g[n.x]);
  requireExact(g[n.gamma], {-kInf, kInf});
  requireExact(g[n.beta], {1, 1});
  // A second row [2, 2] (c = 0, var = 0, var + eps = -2): xhat = 0 / 0 = NaN; the first row
  // is unchanged. var + eps = 0 exactly (x = [1, 3], eps = -1) gives std = +0 as well.
  RefTape<TestType> t2;
  const Norm n2 = layerNorm(t2, 2, 2, {1, 3, 2, 2}, {1, 1}, {0, 0}, -2.0);
  requireExact(values(t2, n2.y), {-kInf, kInf, kNaN, kNaN});
  RefTape<TestType> t3;
  const Norm n3 = layerNorm(t3, 1, 2, {1, 3}, {1, 1}, {0, 0}, -1.0);
  requireExact(values(t3, n3.y), {-kInf, kInf});
}

TEMPLATE_TEST_CASE("a NaN in var + epsilon stays NaN under the clamped square root",
                   "[layer_norm][edge]", float, double, Multi) {
  // eps = NaN: d = NaN, max(NaN, 0) = NaN (Lean's max), so std and every output are NaN.
  RefTape<TestType> t;
  const Norm n = layerNorm(t, 1, 2, {1, 3}, {1, 1}, {0, 0}, kNaN);
  requireAllNaN(values(t, n.y));
}

TEMPLATE_TEST_CASE("layerNorm's gradient on one row of two, worked by hand", "[layer_norm][grad]",
                   float, double, Multi) {
  // x = [1, 3], eps 3: invStd = 1/2, xhat = [-1/2, 1/2].
  // gamma = [1, 1], dy = [1, 0]: g = [1, 0], mean g = 1/2, mean(g xhat) = -1/4,
  //   dx = 1/2 ([1, 0] - 1/2 - [-1/2, 1/2](-1/4)) = 1/2 [3/8, -3/8] = [3/16, -3/16];
  //   check: with d = x0 - x1, y0 = d / (2 sqrt(d^2/4 + 3)); dy0/dd at d = -2 is
  //   1/4 - (-2/8)(-1/4) = 3/16.   dgamma = dy xhat = [-1/2, 0], dbeta = dy = [1, 0].
  {
    RefTape<TestType> t;
    const Norm n = layerNorm(t, 1, 2, {1, 3}, {1, 1}, {0, 0}, 3.0);
    const auto g = grads(t, n.y, {1, 0});
    requireExact(g[n.x], {3.0 / 16, -3.0 / 16});
    requireExact(g[n.gamma], {-0.5, 0});
    requireExact(g[n.beta], {1, 0});
  }
  // gamma = [2, 3], dy = [1, 1]: g = [2, 3], mean g = 5/2, mean(g xhat) = (-1 + 3/2)/2 = 1/4,
  //   dx = 1/2 ([-1/2, 1/2] - [-1/8, 1/8]) = [-3/16, 3/16]
  //   (check: L = 2 y0 + 3 y1 = -xhat0 since xhat1 = -xhat0).  dgamma = [-1/2, 1/2], dbeta = [1, 1].
  {
    RefTape<TestType> t;
    const Norm n = layerNorm(t, 1, 2, {1, 3}, {2, 3}, {0, 0}, 3.0);
    const auto g = grads(t, n.y, {1, 1});
    requireExact(g[n.x], {-3.0 / 16, 3.0 / 16});
    requireExact(g[n.gamma], {-0.5, 0.5});
    requireExact(g[n.beta], {1, 1});
  }
}

TEMPLATE_TEST_CASE("layerNorm's gradient on [1,2,3], worked by hand", "[layer_norm][grad]",
                   float, double, Multi) {
  // eps 0, gamma 1: xhat = [-a, 0, a], invStd = a (a = sqrt(3/2), a^2 = 3/2). dy = [1, 0, 0]:
  //   mean g = 1/3, mean(g xhat) = -a/3,
  //   dx = a ([2/3, -1/3, -1/3] + [-a^2/3, 0, a^2/3]) = a [1/6, -1/3, 1/6];
  //   dgamma = [-a, 0, 0], dbeta = [1, 0, 0].
  RefTape<TestType> t;
  const Norm n = layerNorm(t, 1, 3, {1, 2, 3}, {1, 1, 1}, {0, 0, 0}, 0.0);
  const auto g = grads(t, n.y, {1, 0, 0});
  requireHand<TestType>(g[n.x], {ld(kA / 6), ld(-kA / 3), ld(kA / 6)});
  requireHand<TestType>(g[n.gamma], {ld(-kA), 0, 0});
  requireExact(g[n.beta], {1, 0, 0});
}

TEMPLATE_TEST_CASE("layerNorm sums dgamma and dbeta over rows", "[layer_norm][grad]", float,
                   double, Multi) {
  // x = [[1, 3], [3, 1]], eps 3: xhat = [[-1/2, 1/2], [1/2, -1/2]], invStd 1/2; dy = [[1,2],[3,4]].
  //   dgamma = [1(-1/2) + 3(1/2), 2(1/2) + 4(-1/2)] = [1, -1];  dbeta = [1+3, 2+4] = [4, 6].
  //   row 0: g = [1, 2], mean 3/2, mean(g xhat) = 1/4: dx = 1/2([-1/2, 1/2] - [-1/8, 1/8]);
  //   row 1: g = [3, 4], mean 7/2, mean(g xhat) = -1/4: dx = 1/2([-1/2, 1/2] + [1/8, -1/8]);
  //   both [-3/16, 3/16].
  RefTape<TestType> t;
  const Norm n = layerNorm(t, 2, 2, {1, 3, 3, 1}, {1, 1}, {0, 0}, 3.0);
  const auto g = grads(t, n.y, {1, 2, 3, 4});
  requireExact(g[n.x], {-3.0 / 16, 3.0 / 16, -3.0 / 16, 3.0 / 16});
  requireExact(g[n.gamma], {1, -1});
  requireExact(g[n.beta], {4, 6});
}

TEMPLATE_TEST_CASE("layerNorm's pullback reuses the caller's epsilon", "[layer_norm][grad]",
                   float, double, Multi) {
  // x = [1, 3] (var 1) with eps 15: std = 4, invStd = 1/4, xhat = [-1/4, 1/4] (the default
  // epsilon would give something else entirely). dy = [1, 0]: mean g = 1/2, mean(g xhat) = -1/8,
  //   dx = 1/4 ([1/2, -1/2] - [-1/4, 1/4](-1/8)) = 1/4 [15/32, -15/32] = [15/128, -15/128].
  RefTape<TestType> t;
  const Norm n = layerNorm(t, 1, 2, {1, 3}, {1, 1}, {0, 0}, 15.0);
  requireExact(values(t, n.y), {-0.25, 0.25});
  requireExact(grads(t, n.y, {1, 0})[n.x], {15.0 / 128, -15.0 / 128});
}

TEMPLATE_TEST_CASE("layerNorm with embedDim 1 gives y = beta and dx = 0", "[layer_norm][edge]",
                   float, double, Multi) {
  // N = 1: c = 0, xhat = 0 / sqrt(eps) = 0; dx = invStd (g - g - 0) = 0; dgamma = 0.
  RefTape<TestType> t;
  const Norm n = layerNorm(t, 3, 1, {5, -2, 100}, {2}, {0.5}, 1e-5);
  requireExact(values(t, n.y), {0.5, 0.5, 0.5});
  const auto g = grads(t, n.y, {1, 2, 3});
  requireExact(g[n.x], {0, 0, 0});
  requireExact(g[n.gamma], {0});
  requireExact(g[n.beta], {6});
}

// ---------------------------------------------------------------------------------- batchNorm

TEMPLATE_TEST_CASE("batchNorm normalizes each channel with its own gamma and beta",
                   "[batch_norm]", float, double, Multi) {
  // channels 2, spatial [4], eps 0.
  //   channel 0: [1, 1, 3, 3]: mean 2, c = [-1,-1,1,1], var 1, xhat = c; gamma 1, beta 0.
  //   channel 1: [0, 4, 0, 4]: mean 2, c = [-2,2,-2,2], var 4, std 2, xhat = [-1,1,-1,1];
  //              gamma -1, beta 10: y = [11, 9, 11, 9].
  RefTape<TestType> t;
  const Norm n = batchNorm(t, 2, {4}, {1, 1, 3, 3, 0, 4, 0, 4}, {1, -1}, {0, 10}, 0.0);
  requireExact(values(t, n.y), {-1, -1, 1, 1, 11, 9, 11, 9});
}

TEMPLATE_TEST_CASE("batchNorm folds a rank-3 spatial shape to one axis", "[batch_norm]", float,
                   double, Multi) {
  // Same data as above with spatial [2, 1, 2] (S = 4): x has shape [2, 2, 1, 2].
  RefTape<TestType> t;
  const Norm n = batchNorm(t, 2, {2, 1, 2}, {1, 1, 3, 3, 0, 4, 0, 4}, {1, -1}, {0, 10}, 0.0);
  requireExact(values(t, n.y), {-1, -1, 1, 1, 11, 9, 11, 9});
  // dy = 1 everywhere: g = gamma[c] constant per channel, mean g = g, mean(g xhat) = 0: dx = 0;
  // dgamma = sum xhat = 0; dbeta = S = 4.
  const auto g = grads(t, n.y, Host(8, 1.0));
  requireExact(g[n.x], zeros(8));
  requireExact(g[n.gamma], {0, 0});
  requireExact(g[n.beta], {4, 4});
}

TEMPLATE_TEST_CASE("batchNorm with spatial [] gives xhat = 0, y = beta and only dbeta",
                   "[batch_norm][edge]", float, double, Multi) {
  // S = 1: c = x - x = 0, xhat = 0 / sqrt(1e-5) = 0, y = beta; dx = invStd (g - g - 0) = 0,
  // dgamma = dy * 0 = 0, dbeta = dy.
  RefTape<TestType> t;
  const Norm n = batchNorm(t, 3, {}, {5, -2, 100}, {2, 3, 4}, {0.5, -1, 7}, 1e-5);
  CHECK(t.node(n.y).value.shape == Shape{3});
  requireExact(values(t, n.y), {0.5, -1, 7});
  const auto g = grads(t, n.y, {1, 2, 3});
  requireExact(g[n.x], {0, 0, 0});
  requireExact(g[n.gamma], {0, 0, 0});
  requireExact(g[n.beta], {1, 2, 3});
  // The default epsilon behaves the same.
  RefTape<TestType> t2;
  const NodeId x = leaf(t2, {2}, {3, 4}, false);
  const NodeId gm = leaf(t2, {2}, {1, 1}, false);
  const NodeId b = leaf(t2, {2}, {-1, 2}, false);
  requireExact(values(t2, okId(t2.batchNorm(2, {}, x, gm, b))), {-1, 2});
}

TEMPLATE_TEST_CASE("batchNorm's gradient per channel, worked by hand", "[batch_norm][grad]",
                   float, double, Multi) {
  // channels 2, spatial [2], x = [[1, 3], [3, 1]], eps 3: invStd 1/2,
  // xhat = [[-1/2, 1/2], [1/2, -1/2]]; gamma = [2, 3]; dy = [[1, 0], [1, 0]].
  //   channel 0: g = [2, 0], mean 1, mean(g xhat) = -1/2:
  //              dx = 1/2 ([1, -1] - [1/4, -1/4]) = [3/8, -3/8].
  //   channel 1: g = [3, 0], mean 3/2, mean(g xhat) = 3/4:
  //              dx = 1/2 ([3/2, -3/2] - [3/8, -3/8]) = [9/16, -9/16].
  //   dgamma = [-1/2, 1/2], dbeta = [1, 1].
  RefTape<TestType> t;
  const Norm n = batchNorm(t, 2, {2}, {1, 3, 3, 1}, {2, 3}, {0, 0}, 3.0);
  requireExact(values(t, n.y), {-1, 1, 1.5, -1.5});
  const auto g = grads(t, n.y, {1, 0, 1, 0});
  requireExact(g[n.x], {3.0 / 8, -3.0 / 8, 9.0 / 16, -9.0 / 16});
  requireExact(g[n.gamma], {-0.5, 0.5});
  requireExact(g[n.beta], {1, 1});
}

TEMPLATE_TEST_CASE("batchNorm with var + epsilon below zero gives std = 0", "[batch_norm][edge]",
                   float, double, Multi) {
  // Channel [1, 1, 3, 3]: c = [-1, -1, 1, 1], var 1, eps -2: std = sqrt(max(-1, 0)) = 0,
  // xhat = [-inf, -inf, +inf, +inf]; gamma 1, beta 0: y = xhat.
  RefTape<TestType> t;
  const Norm n = batchNorm(t, 1, {4}, {1, 1, 3, 3}, {1}, {0}, -2.0);
  requireExact(values(t, n.y), {-kInf, -kInf, kInf, kInf});
  requireAllNaN(grads(t, n.y, {1, 0, 0, 0})[n.x]);
  // x = [1, 3], eps = -2, dy = [1, 1]: y = [-inf, +inf]; mean(g * xhat) = NaN so dx = NaN;
  // dgamma = -inf + inf = NaN; dbeta = 2. A constant channel [2, 2] beside it is 0/0 = NaN.
  RefTape<TestType> t2;
  const Norm n2 = batchNorm(t2, 2, {2}, {1, 3, 2, 2}, {1, 1}, {0, 0}, -2.0);
  requireExact(values(t2, n2.y), {-kInf, kInf, kNaN, kNaN});
  const auto g = grads(t2, n2.y, {1, 1, 0, 0});
  requireAllNaN(g[n2.x]);
  requireAllNaN(g[n2.gamma]);
  requireExact(g[n2.beta], {2, 0});
}

TEMPLATE_TEST_CASE("batchNorm centers once: the rounding error of the mean enters var",
                   "[batch_norm][centering]", float, double) {
  // The Spec's batchNorm takes the variance of c itself. e the machine epsilon of the scalar,
  // S = 4, eps = 0, x = [1, 1, 1, 1 + e], in the scalar's own arithmetic: sum x rounds to 4,
  // mean = 1, c = [0, 0, 0, e] exactly, var = e^2 / 4 exactly, std = e / 2:
  // xhat = [0, 0, 0, 2]. (layerNorm, which centers twice, gives 4 / sqrt(3) there.)
  const double e = std::numeric_limits<TestType>::epsilon();
  RefTape<TestType> t;
  const Norm n = batchNorm(t, 1, {4}, {1, 1, 1, 1 + e}, {1}, {0}, 0.0);
  requireExact(values(t, n.y), {0, 0, 0, 2});
}

TEMPLATE_TEST_CASE("batchNorm on [1,2,3] matches layerNorm's hand value", "[batch_norm]", float,
                   double, Multi) {
  // One channel of S = 3 is one layerNorm row: xhat = [-a, 0, a]; gamma 2, beta 1.
  RefTape<TestType> t;
  const Norm n = batchNorm(t, 1, {3}, {1, 2, 3}, {2}, {1}, 0.0);
  requireHand<TestType>(values(t, n.y), {ld(1 - 2 * kA), 1.0, ld(1 + 2 * kA)});
}
