// Every error string of docs/spec.md (errors.h), byte for byte, in the spec's validation order, and
// the tape left exactly as it was after each error.
#include "test_support.h"

using namespace tct;
namespace errors = tapecheck::errors;

namespace {
constexpr NodeId kBad = 999;
constexpr Dim k2to32 = Dim{1} << 32;

// Runs `op`, requires the error `message`, and checks that the tape neither grew nor changed.
template <class S, class Op>
void requireError(RefTape<S>& t, const std::string& message, Op&& op) {
  const std::size_t before = t.size();
  std::vector<Shape> shapes;
  for (std::size_t i = 0; i < before; ++i) shapes.push_back(t.node(i).value.shape);
  const Result<NodeId> r = op();
  REQUIRE_FALSE(r.ok());
  CHECK(r.message() == message);
  CHECK(t.size() == before);
  for (std::size_t i = 0; i < before; ++i) CHECK(t.node(i).value.shape == shapes[i]);
}

// A tape with leaves of the shapes the ops below need.
template <class S>
struct Fixture {
  RefTape<S> t;
  NodeId v3 = leaf(t, {3}, {1, 2, 3}, true);            // 0: [3]
  NodeId m23 = leaf(t, {2, 3}, {1, 2, 3, 4, 5, 6}, true);  // 1: [2, 3]
  NodeId sc = leaf(t, {}, {1}, true);                   // 2: []
  NodeId v2 = leaf(t, {2}, {1, 1}, true);               // 3: [2]
  NodeId e20 = leaf(t, {2, 0}, {}, true);               // 4: [2, 0]
  NodeId v6 = leaf(t, {6}, {1, 2, 3, 4, 5, 6}, true);   // 5: [6]
  NodeId m32 = leaf(t, {3, 2}, {1, 2, 3, 4, 5, 6}, true);  // 6: [3, 2]
  NodeId b221 = leaf(t, {2, 2, 1}, {1, 2, 3, 4}, true);  // 7: [2, 2, 1]
};
}  // namespace

TEMPLATE_TEST_CASE("a missing id is 'invalid node id' for every operation", "[errors]", float,
                   double, Multi) {
  Fixture<TestType> f;
  auto& t = f.t;
  const std::string msg = errors::kInvalidNodeId;
  CHECK(msg == "autograd: invalid node id");
  for (const Shape& s : {Shape{3}, Shape{}, Shape{2, 0}}) {
    INFO("shape " << tapecheck::toString(s));
    requireError(t, msg, [&] { return t.softmaxLast(s, kBad); });
    requireError(t, msg, [&] { return t.logSoftmaxLast(s, kBad); });
    requireError(t, msg, [&] { return t.topKMask(s, 1, kBad); });
  }
  // The id just past the end is missing too.
  requireError(t, msg, [&] { return t.softmaxLast({3}, t.size()); });
  // layerNorm and batchNorm: x, gamma, beta in turn.
  requireError(t, msg, [&] { return t.layerNorm(2, 3, kBad, f.v3, f.v3); });
  requireError(t, msg, [&] { return t.layerNorm(2, 3, f.m23, kBad, f.v3); });
  requireError(t, msg, [&] { return t.layerNorm(2, 3, f.m23, f.v3, kBad); });
  requireError(t, msg, [&] { return t.batchNorm(2, {3}, kBad, f.v2, f.v2); });
  requireError(t, msg, [&] { return t.batchNorm(2, {3}, f.m23, kBad, f.v2); });
  requireError(t, msg, [&] { return t.batchNorm(2, {3}, f.m23, f.v2, kBad); });
  // crossEntropy and distill: both arguments, non-empty and empty shapes.
  requireError(t, msg, [&] { return t.crossEntropy({2, 3}, 1, kBad, f.m23); });
  requireError(t, msg, [&] { return t.crossEntropy({2, 3}, 1, f.m23, kBad); });
  requireError(t, msg, [&] { return t.crossEntropy({2, 0}, 1, kBad, f.e20); });
  requireError(t, msg, [&] { return t.crossEntropy({2, 0}, 1, f.e20, kBad); });
  requireError(t, msg, [&] { return t.distill({2, 3}, 1, kBad, f.m23); });
  requireError(t, msg, [&] { return t.distill({2, 3}, 1, f.m23, kBad); });
  requireError(t, msg, [&] { return t.distill({2, 0}, 0, kBad, f.e20); });
  requireError(t, msg, [&] { return t.distill({2, 0}, 0, f.e20, kBad); });
}

TEMPLATE_TEST_CASE("a node of another shape is 'shape mismatch' for every operation", "[errors]",
                   float, double, Multi) {
  Fixture<TestType> f;
  auto& t = f.t;
  const std::string msg = errors::kShapeMismatch;
  CHECK(msg == "autograd: shape mismatch");
  // Same size, different shape: [6] vs [2, 3] vs [3, 2].
  requireError(t, msg, [&] { return t.softmaxLast({2, 3}, f.v6); });
  requireError(t, msg, [&] { return t.logSoftmaxLast({2, 3}, f.m32); });
  requireError(t, msg, [&] { return t.topKMask({6}, 2, f.m23); });
  // Scalar vs [1]-like and empty vs empty of another shape.
  requireError(t, msg, [&] { return t.softmaxLast({}, f.v3); });
  requireError(t, msg, [&] { return t.softmaxLast({3}, f.sc); });
  requireError(t, msg, [&] { return t.logSoftmaxLast({0, 2}, f.e20); });
  requireError(t, msg, [&] { return t.topKMask({}, 1, f.v2); });
  // layerNorm: x must be [seqLen, embedDim] (not flat), gamma and beta [embedDim].
  requireError(t, msg, [&] { return t.layerNorm(2, 3, f.v6, f.v3, f.v3); });
  requireError(t, msg, [&] { return t.layerNorm(2, 3, f.m23, f.v2, f.v3); });
  requireError(t, msg, [&] { return t.layerNorm(2, 3, f.m23, f.v3, f.m23); });
  // batchNorm: x must be channels :: spatial, gamma and beta [channels].
  requireError(t, msg, [&] { return t.batchNorm(2, {2, 1}, f.m23, f.v2, f.v2); });
  requireError(t, msg, [&] { return t.batchNorm(2, {3}, f.v6, f.v2, f.v2); });
  requireError(t, msg, [&] { return t.batchNorm(2, {3}, f.m23, f.v3, f.v2); });
  requireError(t, msg, [&] { return t.batchNorm(2, {3}, f.m23, f.v2, f.sc); });
  // crossEntropy and distill: logits/student and target/teacher share the declared shape.
  requireError(t, msg, [&] { return t.crossEntropy({2, 3}, 0, f.m32, f.m23); });
  requireError(t, msg, [&] { return t.crossEntropy({2, 3}, 0, f.m23, f.v6); });
  requireError(t, msg, [&] { return t.distill({2, 3}, 0, f.v6, f.m23); });
  requireError(t, msg, [&] { return t.distill({2, 3}, 0, f.m23, f.m32); });
}

TEMPLATE_TEST_CASE("lookups fail in argument order", "[errors]", float, double, Multi) {
  // x before gamma before beta; logits before target; student before teacher. Whichever of
  // the two errors comes first in argument order is the one reported.
  Fixture<TestType> f;
  auto& t = f.t;
  const std::string id = errors::kInvalidNodeId, shape = errors::kShapeMismatch;
  requireError(t, shape, [&] { return t.layerNorm(2, 3, f.v6, kBad, kBad); });
  requireError(t, id, [&] { return t.layerNorm(2, 3, kBad, f.v2, f.v2); });
  requireError(t, shape, [&] { return t.layerNorm(2, 3, f.m23, f.v2, kBad); });
  requireError(t, id, [&] { return t.layerNorm(2, 3, f.m23, kBad, f.v2); });
  requireError(t, shape, [&] { return t.layerNorm(2, 3, f.m23, f.v3, f.v2); });
  requireError(t, id, [&] { return t.layerNorm(2, 3, f.m23, f.v3, kBad); });
  requireError(t, shape, [&] { return t.batchNorm(2, {3}, f.v6, kBad, kBad); });
  requireError(t, id, [&] { return t.batchNorm(2, {3}, kBad, f.v3, f.v3); });
  requireError(t, shape, [&] { return t.batchNorm(2, {3}, f.m23, f.v3, kBad); });
  requireError(t, id, [&] { return t.batchNorm(2, {3}, f.m23, kBad, f.v3); });
  requireError(t, shape, [&] { return t.crossEntropy({2, 3}, 1, f.m32, kBad); });
  requireError(t, id, [&] { return t.crossEntropy({2, 3}, 1, kBad, f.m32); });
  requireError(t, shape, [&] { return t.distill({2, 3}, 1, f.m32, kBad); });
  requireError(t, id, [&] { return t.distill({2, 3}, 1, kBad, f.m32); });
}

TEMPLATE_TEST_CASE("an axis outside the shape is crossEntropy's and distill's own error",
                   "[errors]", float, double, Multi) {
  Fixture<TestType> f;
  auto& t = f.t;
  const std::string ce = errors::kCrossEntropyAxis, di = errors::kDistillAxis;
  CHECK(ce == "autograd: cross_entropy: axis out of bounds");
  CHECK(di == "autograd: distill: axis out of bounds");
  requireError(t, ce, [&] { return t.crossEntropy({3}, 1, f.v3, f.v3); });
  requireError(t, ce, [&] { return t.crossEntropy({2, 3}, 2, f.m23, f.m23); });
  requireError(t, ce, [&] { return t.crossEntropy({2, 3}, std::uint64_t{1} << 63, f.m23, f.m23); });
  requireError(t, ce, [&] { return t.crossEntropy({}, 0, f.sc, f.sc); });  // rank 0: no axis
  requireError(t, ce, [&] { return t.crossEntropy({2, 0}, 2, f.e20, f.e20); });
  requireError(t, di, [&] { return t.distill({3}, 1, f.v3, f.v3); });
  requireError(t, di, [&] { return t.distill({2, 3}, 2, f.m23, f.m23); });
  requireError(t, di, [&] { return t.distill({}, 0, f.sc, f.sc); });
  requireError(t, di, [&] { return t.distill({2, 0}, 5, f.e20, f.e20); });
  // The last axis is in bounds.
  CHECK(t.crossEntropy({2, 3}, 1, f.m23, f.m23).ok());
  CHECK(t.distill({2, 3}, 1, f.m23, f.m23).ok());
}

TEMPLATE_TEST_CASE("layerNorm rejects seqLen or embedDim of zero", "[errors]", float, double,
                   Multi) {
  Fixture<TestType> f;
  auto& t = f.t;
  const std::string msg = errors::kLayerNormDims;
  CHECK(msg == "autograd: layer_norm: seqLen and embedDim must be positive");
  requireError(t, msg, [&] { return t.layerNorm(0, 3, f.m23, f.v3, f.v3); });
  requireError(t, msg, [&] { return t.layerNorm(2, 0, f.e20, f.v3, f.v3); });
  requireError(t, msg, [&] { return t.layerNorm(0, 0, kBad, kBad, kBad); });
  // The dimension check is a precondition: it comes before any lookup.
  requireError(t, msg, [&] { return t.layerNorm(0, 3, kBad, kBad, kBad); });
}

TEMPLATE_TEST_CASE("batchNorm rejects a shape with a zero dimension", "[errors]", float, double,
                   Multi) {
  Fixture<TestType> f;
  auto& t = f.t;
  const std::string msg = errors::kBatchNormShape;
  CHECK(msg == "autograd: batch_norm: shape must be well-formed");
  requireError(t, msg, [&] { return t.batchNorm(0, {}, f.sc, f.sc, f.sc); });
  requireError(t, msg, [&] { return t.batchNorm(0, {3}, kBad, kBad, kBad); });
  requireError(t, msg, [&] { return t.batchNorm(2, {0}, f.e20, f.v2, f.v2); });
  requireError(t, msg, [&] { return t.batchNorm(2, {3, 0}, kBad, f.v2, f.v2); });
  requireError(t, msg, [&] { return t.batchNorm(2, {0, k2to32}, kBad, kBad, kBad); });
}

TEMPLATE_TEST_CASE("each folded dimension too large for UInt32 is reported before the lookups; "
                   "the element count at the lookup",
                   "[errors]", float, double, Multi) {
  Fixture<TestType> f;
  auto& t = f.t;
  const std::string big = errors::kTooLarge, id = errors::kInvalidNodeId,
                    shape = errors::kShapeMismatch;
  CHECK(big == "autograd: tensor too large (numel does not fit in UInt32)");
  // cols (2^32) or rows (2^32, or 2 * 2^31) past UInt32: the fold fails before the lookup.
  for (const Shape& s : {Shape{k2to32}, Shape{1, k2to32}, Shape{k2to32, 1}, Shape{2, 2, k2to32},
                         Shape{2, 1u << 31, 2}}) {
    INFO("shape " << tapecheck::toString(s));
    requireError(t, big, [&] { return t.softmaxLast(s, kBad); });
    requireError(t, big, [&] { return t.logSoftmaxLast(s, kBad); });
    requireError(t, big, [&] { return t.topKMask(s, 1, kBad); });
    requireError(t, big, [&] { return t.softmaxLast(s, f.v3); });
  }
  // rows and cols each fit, only their product does not (65536 * 65537 = 2^32 + 65536;
  // [2, 2, 2^31] is rows 4, cols 2^31): the lookup runs, and the id or the shape is wrong.
  for (const Shape& s : {Shape{65536, 65537}, Shape{65536, 65536}, Shape{2, 2, 1u << 31}}) {
    INFO("shape " << tapecheck::toString(s));
    requireError(t, id, [&] { return t.softmaxLast(s, kBad); });
    requireError(t, id, [&] { return t.logSoftmaxLast(s, kBad); });
    requireError(t, id, [&] { return t.topKMask(s, 1, kBad); });
    requireError(t, shape, [&] { return t.softmaxLast(s, f.v3); });
    requireError(t, shape, [&] { return t.topKMask(s, 1, f.v2); });
  }
  // 65535 * 65537 = 2^32 - 1 fits: the lookup runs and the id is invalid.
  requireError(t, id, [&] { return t.softmaxLast({65535, 65537}, kBad); });
  requireError(t, id, [&] { return t.topKMask({Dim{4294967295}}, 1, kBad); });
  // layerNorm: seqLen, then embedDim, before the lookups; their product at x's lookup.
  requireError(t, big, [&] { return t.layerNorm(1, k2to32, kBad, kBad, kBad); });
  requireError(t, big, [&] { return t.layerNorm(k2to32, 1, kBad, kBad, kBad); });
  requireError(t, id, [&] { return t.layerNorm(65536, 65537, kBad, kBad, kBad); });
  requireError(t, shape, [&] { return t.layerNorm(65536, 65537, f.m23, kBad, kBad); });
  // batchNorm: channels, then S = size(spatial), before the lookups.
  requireError(t, big, [&] { return t.batchNorm(1, {2, 1u << 31}, kBad, kBad, kBad); });
  requireError(t, big, [&] { return t.batchNorm(k2to32, {1}, kBad, kBad, kBad); });
  requireError(t, id, [&] { return t.batchNorm(65536, {65537}, kBad, kBad, kBad); });
  requireError(t, id, [&] { return t.batchNorm(65536, {256, 256}, kBad, kBad, kBad); });
  // crossEntropy and distill: outer, n and inner each, before the lookups.
  requireError(t, big, [&] { return t.crossEntropy({k2to32, 1}, 1, kBad, kBad); });
  requireError(t, big, [&] { return t.crossEntropy({1, k2to32}, 1, kBad, kBad); });
  requireError(t, big, [&] { return t.crossEntropy({1, k2to32}, 0, kBad, kBad); });
  requireError(t, big, [&] { return t.distill({2, 1u << 31, 3}, 2, kBad, kBad); });
  for (std::uint64_t axis : {0, 1}) {
    INFO("axis " << axis);
    requireError(t, id, [&] { return t.crossEntropy({65536, 65537}, axis, kBad, kBad); });
    requireError(t, id, [&] { return t.distill({65536, 65537}, axis, kBad, kBad); });
    requireError(t, shape, [&] { return t.crossEntropy({65536, 65537}, axis, f.m23, kBad); });
  }
}

TEMPLATE_TEST_CASE("an empty tensor with a dimension of 2^32 or more is too large at its lookup",
                   "[errors]", float, double, Multi) {
  Fixture<TestType> f;
  auto& t = f.t;
  const std::string big = errors::kTooLarge, id = errors::kInvalidNodeId;
  // The leaf is accepted: TorchLean's leaf records its value without validating it.
  const NodeId huge = leaf(t, {0, Dim{1} << 33}, {}, true);
  const NodeId edge = leaf(t, {0, k2to32 - 1}, {}, true);
  const NodeId past = leaf(t, {0, k2to32}, {}, true);
  // The id is checked first, then the shape, then every dimension.
  requireError(t, id, [&] { return t.softmaxLast({0, k2to32}, kBad); });
  requireError(t, errors::kShapeMismatch, [&] { return t.softmaxLast({0, k2to32}, huge); });
  for (NodeId x : {huge, past}) {
    const Shape s = t.node(x).value.shape;
    INFO("shape " << tapecheck::toString(s));
    requireError(t, big, [&] { return t.softmaxLast(s, x); });
    requireError(t, big, [&] { return t.logSoftmaxLast(s, x); });
    requireError(t, big, [&] { return t.topKMask(s, 3, x); });
    requireError(t, big, [&] { return t.crossEntropy(s, 1, x, x); });
    requireError(t, big, [&] { return t.distill(s, 0, x, x); });
  }
  // A dimension of 2^32 - 1 fits.
  CHECK(t.softmaxLast({0, k2to32 - 1}, edge).ok());
  CHECK(t.crossEntropy({0, k2to32 - 1}, 1, edge, edge).ok());
  // The logits are looked up, and validated, before the target.
  requireError(t, id, [&] { return t.crossEntropy({0, k2to32}, 1, kBad, past); });
  requireError(t, big, [&] { return t.crossEntropy({0, k2to32}, 1, past, kBad); });
}

TEMPLATE_TEST_CASE("backward rejects a missing output and a seed of the wrong shape",
                   "[errors][backward]", float, double, Multi) {
  Fixture<TestType> f;
  auto& t = f.t;
  using Value = typename RefTape<TestType>::Value;
  auto seed = [&](Shape s, const Host& v) { return Value{std::move(s), t.backend().fromHost(v).value()}; };
  const std::size_t before = t.size();
  auto requireBackwardError = [&](NodeId out, const Value& v, const std::string& msg) {
    auto r = t.backward(out, v);
    REQUIRE_FALSE(r.ok());
    CHECK(r.message() == msg);
    CHECK(t.size() == before);
  };
  const std::string out = errors::kInvalidOutputId, sm = errors::kSeedMismatch;
  CHECK(out == "autograd: invalid output id");
  CHECK(sm == "autograd: seed gradient shape mismatch for output");
  requireBackwardError(t.size(), seed({3}, {1, 1, 1}), out);
  requireBackwardError(kBad, seed({3}, {1, 1, 1}), out);
  requireBackwardError(f.v3, seed({2}, {1, 1}), sm);
  requireBackwardError(f.v3, seed({3, 1}, {1, 1, 1}), sm);
  requireBackwardError(f.m23, seed({3, 2}, {1, 1, 1, 1, 1, 1}), sm);
  requireBackwardError(f.sc, seed({1}, {1}), sm);
  requireBackwardError(f.e20, seed({0, 2}, {}), sm);
  // Right shape, wrong number of elements in the buffer: TorchLean's buffer validation.
  requireBackwardError(f.v3, seed({3}, {1, 1}),
                       "autograd: CUDA buffer size mismatch (shape elements=3, native elements=2)");
  requireBackwardError(f.e20, seed({2, 0}, {1}),
                       "autograd: CUDA buffer size mismatch (shape elements=0, native elements=1)");
  // The output id is checked before the seed.
  requireBackwardError(kBad, seed({7, 7}, {}), out);
}

TEMPLATE_TEST_CASE("after any error the tape keeps working and ids continue from its size",
                   "[errors]", float, double, Multi) {
  Fixture<TestType> f;
  auto& t = f.t;
  const std::size_t before = t.size();
  CHECK_FALSE(t.softmaxLast({65536, 65537}, kBad).ok());
  CHECK_FALSE(t.layerNorm(0, 3, f.m23, f.v3, f.v3).ok());
  CHECK_FALSE(t.batchNorm(2, {3}, f.m23, f.v2, kBad).ok());
  CHECK_FALSE(t.crossEntropy({2, 3}, 2, f.m23, f.m23).ok());
  CHECK(okId(t.softmaxLast({3}, f.v3)) == before);
  CHECK(t.size() == before + 1);
  // A leaf whose buffer does not hold size(shape) elements is refused too, tape unchanged.
  auto b = t.backend().fromHost({1, 2});
  REQUIRE(b.ok());
  const auto r = t.leaf({3}, std::move(b).value(), true);
  CHECK_FALSE(r.ok());
  CHECK(t.size() == before + 1);
}
