// topKMask (docs/spec.md#operations): masks of the k largest entries per row, ties by lower index,
// NaN below every number, k = 0 and k >= cols, the scalar, empty tensors, and no gradient.
#include "test_support.h"

using namespace tct;

namespace {
template <class S>
Host mask(const Shape& s, std::uint64_t k, const Host& x) {
  RefTape<S> t;
  const NodeId id = leaf(t, s, x, true);
  const NodeId m = okId(t.topKMask(s, k, id));
  CHECK(t.node(m).name == "topk_mask");
  CHECK(t.node(m).value.shape == s);
  CHECK_FALSE(t.node(m).requiresGrad);
  return values(t, m);
}
}  // namespace

TEMPLATE_TEST_CASE("topKMask keeps the k largest entries of [3, 1, 2] for every k",
                   "[topk]", float, double, Multi) {
  // Order: 3 (index 0), 2 (index 2), 1 (index 1).
  const Host x = {3, 1, 2};
  requireExact(mask<TestType>({3}, 0, x), {0, 0, 0});  // k = 0 keeps nothing
  requireExact(mask<TestType>({3}, 1, x), {1, 0, 0});
  requireExact(mask<TestType>({3}, 2, x), {1, 0, 1});
  requireExact(mask<TestType>({3}, 3, x), {1, 1, 1});  // k = cols keeps everything
  requireExact(mask<TestType>({3}, 4, x), {1, 1, 1});  // k > cols too
  // k beyond UInt32 still keeps everything (clamped to cols, not wrapped).
  requireExact(mask<TestType>({3}, std::uint64_t{1} << 40, x), {1, 1, 1});
  requireExact(mask<TestType>({3}, (std::uint64_t{1} << 32) + 1, x), {1, 1, 1});
}

TEMPLATE_TEST_CASE("topKMask breaks ties by the lower index", "[topk]", float, double, Multi) {
  // [1, 2, 2, 0]: the two 2s tie, index 1 before index 2.
  requireExact(mask<TestType>({4}, 1, {1, 2, 2, 0}), {0, 1, 0, 0});
  requireExact(mask<TestType>({4}, 2, {1, 2, 2, 0}), {0, 1, 1, 0});
  requireExact(mask<TestType>({4}, 3, {1, 2, 2, 0}), {1, 1, 1, 0});
  requireExact(mask<TestType>({3}, 2, {5, 5, 5}), {1, 1, 0});
  requireExact(mask<TestType>({3}, 1, {5, 5, 5}), {1, 0, 0});
  // -0 and +0 are equal values: the lower index wins, whichever sign it has.
  requireExact(mask<TestType>({2}, 1, {-0.0, 0.0}), {1, 0});
  requireExact(mask<TestType>({2}, 1, {0.0, -0.0}), {1, 0});
  // Infinities are numbers like any other.
  requireExact(mask<TestType>({3}, 1, {-kInf, kInf, kInf}), {0, 1, 0});
  requireExact(mask<TestType>({3}, 2, {-kInf, 1, -kInf}), {1, 1, 0});
}

TEMPLATE_TEST_CASE("topKMask ranks NaN below -inf and NaNs among themselves by index", "[topk]",
                   float, double, Multi) {
  // [NaN, -inf, 0]: order 0 (index 2), -inf (index 1), NaN (index 0).
  requireExact(mask<TestType>({3}, 1, {kNaN, -kInf, 0}), {0, 0, 1});
  requireExact(mask<TestType>({3}, 2, {kNaN, -kInf, 0}), {0, 1, 1});
  requireExact(mask<TestType>({3}, 3, {kNaN, -kInf, 0}), {1, 1, 1});
  // [NaN, NaN, 1]: order 1 (index 2), NaN (index 0), NaN (index 1).
  requireExact(mask<TestType>({3}, 2, {kNaN, kNaN, 1}), {1, 0, 1});
  // [1, NaN, NaN]: order 1 (index 0), NaN (index 1), NaN (index 2).
  requireExact(mask<TestType>({3}, 2, {1, kNaN, kNaN}), {1, 1, 0});
  // [NaN, 3, NaN, -inf]: order 3 (1), -inf (3), NaN (0), NaN (2).
  requireExact(mask<TestType>({4}, 2, {kNaN, 3, kNaN, -kInf}), {0, 1, 0, 1});
  requireExact(mask<TestType>({4}, 3, {kNaN, 3, kNaN, -kInf}), {1, 1, 0, 1});
  // All NaN: by index.
  requireExact(mask<TestType>({3}, 2, {kNaN, kNaN, kNaN}), {1, 1, 0});
  // +inf ranks first, NaN last.
  requireExact(mask<TestType>({3}, 1, {kNaN, kInf, 1}), {0, 1, 0});
}

TEMPLATE_TEST_CASE("topKMask works row by row on a folded tensor", "[topk]", float, double,
                   Multi) {
  // Shape [2,1,3]: rows [3, 1, 2] and [1, 2, 3]; k = 1 keeps index 0 and index 2.
  requireExact(mask<TestType>({2, 1, 3}, 1, {3, 1, 2, 1, 2, 3}), {1, 0, 0, 0, 0, 1});
  // k = 2 on rows [NaN, 0, 0] and [2, 2, 2]: [0,1,1] and [1,1,0].
  requireExact(mask<TestType>({2, 3}, 2, {kNaN, 0, 0, 2, 2, 2}), {0, 1, 1, 1, 1, 0});
  // Columns of one entry: every row keeps its entry iff k > 0, whatever the value.
  requireExact(mask<TestType>({3, 1}, 1, {kNaN, -kInf, 4}), {1, 1, 1});
  requireExact(mask<TestType>({3, 1}, 0, {kNaN, -kInf, 4}), {0, 0, 0});
}

TEMPLATE_TEST_CASE("topKMask of a scalar keeps it iff k > 0", "[topk][edge]", float, double,
                   Multi) {
  // SPEC: a scalar is a row of one entry, kept iff 0 < k (whatever its value).
  for (double v : {2.5, kNaN, -kInf}) {
    INFO("x = " << v);
    requireExact(mask<TestType>({}, 0, {v}), {0});
    requireExact(mask<TestType>({}, 1, {v}), {1});
    requireExact(mask<TestType>({}, 7, {v}), {1});
    requireExact(mask<TestType>({}, std::uint64_t{1} << 40, {v}), {1});
  }
}

TEMPLATE_TEST_CASE("topKMask of an empty tensor is an empty mask of the same shape",
                   "[topk][edge]", float, double, Multi) {
  for (const Shape& s : {Shape{0}, Shape{2, 0}, Shape{0, 3}, Shape{2, 0, 4}}) {
    INFO("shape " << tapecheck::toString(s));
    for (std::uint64_t k : {0, 1, 5}) CHECK(mask<TestType>(s, k, {}).empty());
  }
}

TEMPLATE_TEST_CASE("no gradient reaches x through topKMask", "[topk][grad]", float, double,
                   Multi) {
  // The node never requires grad, so even a seed placed on the mask stops there.
  RefTape<TestType> t;
  const NodeId x = leaf(t, {3}, {3, 1, 2}, true);
  const NodeId m = okId(t.topKMask({3}, 2, x));
  CHECK_FALSE(t.node(m).requiresGrad);
  const auto g = grads(t, m, {1, 2, 3});
  requireExact(g[m], {1, 2, 3});  // the output's gradient is the seed
  requireExact(g[x], {0, 0, 0});

  // Used as a cross-entropy target, the mask's gradient (-logp) is dropped and x receives only
  // the logits contribution. x = [0, 0], k = 1 -> mask [1, 0]; logp = [-ln 2, -ln 2];
  // dlogits = softmax * T - target = [1/2 - 1, 1/2 - 0] = [-1/2, 1/2] (one slice, denom 1).
  RefTape<TestType> t2;
  const NodeId x2 = leaf(t2, {2}, {0, 0}, true);
  const NodeId m2 = okId(t2.topKMask({2}, 1, x2));
  requireExact(values(t2, m2), {1, 0});
  const NodeId ce = okId(t2.crossEntropy({2}, 0, x2, m2));
  CHECK(t2.node(ce).requiresGrad);
  const auto g2 = grads(t2, ce, {1});
  requireHand<TestType>(g2[x2], {-0.5, 0.5});
  requireExact(g2[m2], {0, 0});
}

TEMPLATE_TEST_CASE("topKMask of an empty or scalar x never requires grad either",
                   "[topk][grad][edge]", float, double, Multi) {
  RefTape<TestType> t;
  const NodeId e = leaf(t, {2, 0}, {}, true);
  const NodeId s = leaf(t, {}, {1.0}, true);
  CHECK_FALSE(t.node(okId(t.topKMask({2, 0}, 1, e))).requiresGrad);
  const NodeId ms = okId(t.topKMask({}, 1, s));
  CHECK_FALSE(t.node(ms).requiresGrad);
  requireExact(grads(t, ms, {4.0})[s], {0.0});
}
