// Every error of the device tape is the reference tape's, byte for byte, and leaves the tape
// unchanged (Tape<Backend> owns validation; these tests pin that the device backend never
// reaches a kernel, or fails differently, before it).
#include <catch2/catch.hpp>

#include <functional>

#include "support.h"

using namespace tapecheck;
using namespace tapecheck::device;
using namespace tapecheck::device::testing;

namespace {

using Call = std::function<Result<NodeId>(conformance::AnyTape&)>;

struct ErrorCase {
  std::string name;
  std::vector<Leaf> leaves;
  Call call;
  const char* expected;  // the docs/spec.md string
};

Leaf leaf(Shape s) { return Leaf{tensor(s, std::vector<double>(sizeOf(s), 0.5)), true}; }

constexpr Dim kBig = 65536;  // kBig * (kBig + 1) > 2^32 - 1, though each fits UInt32
constexpr Dim k2to32 = Dim{1} << 32;

std::vector<ErrorCase> errorCases() {
  const Shape s23{2, 3};
  std::vector<ErrorCase> v;
  // rowOpLast: empty, scalar and general dispatch each validate x; rows and cols are checked
  // before the lookup, the element count (and an empty shape's dimensions) at the lookup.
  for (const char* op : {"softmaxLast", "logSoftmaxLast", "topKMask"}) {
    const std::string o = op;
    auto rowOp = [o](const Shape& s, NodeId x) -> Call {
      return [o, s, x](conformance::AnyTape& t) {
        if (o == "softmaxLast") return t.softmaxLast(s, x);
        if (o == "logSoftmaxLast") return t.logSoftmaxLast(s, x);
        return t.topKMask(s, 2, x);
      };
    };
    v.push_back({o + " invalid id", {leaf(s23)}, rowOp(s23, 1), errors::kInvalidNodeId});
    v.push_back({o + " shape mismatch", {leaf(s23)}, rowOp({3, 2}, 0), errors::kShapeMismatch});
    v.push_back({o + " scalar invalid id", {leaf({})}, rowOp({}, 7), errors::kInvalidNodeId});
    v.push_back({o + " scalar shape mismatch", {leaf(s23)}, rowOp({}, 0), errors::kShapeMismatch});
    v.push_back({o + " empty invalid id", {leaf({0, 3})}, rowOp({0, 3}, 4), errors::kInvalidNodeId});
    v.push_back({o + " empty shape mismatch", {leaf(s23)}, rowOp({0, 3}, 0), errors::kShapeMismatch});
    v.push_back({o + " element count too large: invalid id first", {leaf(s23)},
                 rowOp({kBig, kBig + 1}, 99), errors::kInvalidNodeId});
    v.push_back({o + " element count too large: shape mismatch first", {leaf(s23)},
                 rowOp({kBig, kBig + 1}, 0), errors::kShapeMismatch});
    v.push_back({o + " rows too large", {leaf(s23)}, rowOp({Dim{1} << 33, 1}, 0),
                 errors::kTooLarge});
    v.push_back({o + " cols too large before invalid id", {leaf(s23)}, rowOp({1, k2to32}, 99),
                 errors::kTooLarge});
    v.push_back({o + " empty leaf with a dimension of 2^33", {leaf(s23), leaf({0, Dim{1} << 33})},
                 rowOp({0, Dim{1} << 33}, 1), errors::kTooLarge});
  }
  auto ln = [](Dim seq, Dim emb, NodeId x, NodeId g, NodeId b) -> Call {
    return [=](conformance::AnyTape& t) { return t.layerNorm(seq, emb, x, g, b, 1e-5); };
  };
  const std::vector<Leaf> lnLeaves{leaf({2, 4}), leaf({4}), leaf({4}), leaf({3})};
  v.push_back({"layerNorm seqLen 0", lnLeaves, ln(0, 4, 9, 9, 9), errors::kLayerNormDims});
  v.push_back({"layerNorm embedDim 0", lnLeaves, ln(2, 0, 0, 1, 2), errors::kLayerNormDims});
  v.push_back({"layerNorm element count too large: invalid id first", lnLeaves,
               ln(kBig, kBig + 1, 9, 9, 9), errors::kInvalidNodeId});
  v.push_back({"layerNorm embedDim too large before invalid id", lnLeaves,
               ln(1, k2to32, 9, 9, 9), errors::kTooLarge});
  v.push_back({"layerNorm invalid x before gamma mismatch", lnLeaves, ln(2, 4, 9, 3, 2),
               errors::kInvalidNodeId});
  v.push_back({"layerNorm x mismatch", lnLeaves, ln(4, 2, 0, 1, 2), errors::kShapeMismatch});
  v.push_back({"layerNorm gamma mismatch", lnLeaves, ln(2, 4, 0, 3, 2), errors::kShapeMismatch});
  v.push_back({"layerNorm gamma invalid before beta mismatch", lnLeaves, ln(2, 4, 0, 9, 3),
               errors::kInvalidNodeId});
  v.push_back({"layerNorm beta invalid", lnLeaves, ln(2, 4, 0, 1, 9), errors::kInvalidNodeId});

  auto bn = [](Dim channels, Shape spatial, NodeId x, NodeId g, NodeId b) -> Call {
    return [=](conformance::AnyTape& t) { return t.batchNorm(channels, spatial, x, g, b, 1e-5); };
  };
  const std::vector<Leaf> bnLeaves{leaf({2, 3, 2}), leaf({2}), leaf({2}), leaf({3})};
  v.push_back({"batchNorm channels 0", bnLeaves, bn(0, {3, 2}, 0, 1, 2), errors::kBatchNormShape});
  v.push_back({"batchNorm spatial with 0", bnLeaves, bn(2, {3, 0}, 0, 1, 2),
               errors::kBatchNormShape});
  v.push_back({"batchNorm element count too large: invalid id first", bnLeaves,
               bn(kBig, {kBig + 1}, 9, 9, 9), errors::kInvalidNodeId});
  v.push_back({"batchNorm channels too large before invalid id", bnLeaves,
               bn(k2to32, {1}, 9, 9, 9), errors::kTooLarge});
  v.push_back({"batchNorm x mismatch", bnLeaves, bn(2, {6}, 0, 1, 2), errors::kShapeMismatch});
  v.push_back({"batchNorm invalid x", bnLeaves, bn(2, {3, 2}, 9, 1, 2), errors::kInvalidNodeId});
  v.push_back({"batchNorm gamma mismatch", bnLeaves, bn(2, {3, 2}, 0, 3, 2),
               errors::kShapeMismatch});
  v.push_back({"batchNorm beta invalid", bnLeaves, bn(2, {3, 2}, 0, 1, 9), errors::kInvalidNodeId});

  auto ce = [](Shape s, std::uint64_t axis, NodeId l, NodeId t) -> Call {
    return [=](conformance::AnyTape& tape) { return tape.crossEntropy(s, axis, l, t, true); };
  };
  const std::vector<Leaf> ceLeaves{leaf(s23), leaf(s23), leaf({3, 2})};
  v.push_back({"crossEntropy axis out of bounds", ceLeaves, ce(s23, 2, 9, 9),
               errors::kCrossEntropyAxis});
  v.push_back({"crossEntropy scalar axis out of bounds", ceLeaves, ce({}, 0, 0, 1),
               errors::kCrossEntropyAxis});
  v.push_back({"crossEntropy element count too large: invalid id first", ceLeaves,
               ce({kBig, kBig + 1}, 1, 9, 9), errors::kInvalidNodeId});
  v.push_back({"crossEntropy outer too large before invalid id", ceLeaves,
               ce({k2to32, 1}, 1, 9, 9), errors::kTooLarge});
  v.push_back({"crossEntropy invalid logits", ceLeaves, ce(s23, 1, 9, 1), errors::kInvalidNodeId});
  v.push_back({"crossEntropy target mismatch", ceLeaves, ce(s23, 1, 0, 2), errors::kShapeMismatch});
  v.push_back({"crossEntropy empty target mismatch", ceLeaves, ce({0, 3}, 1, 0, 1),
               errors::kShapeMismatch});

  auto distill = [](Shape s, std::uint64_t axis, NodeId st, NodeId te) -> Call {
    return [=](conformance::AnyTape& tape) { return tape.distill(s, axis, st, te); };
  };
  v.push_back({"distill axis out of bounds", ceLeaves, distill(s23, 5, 0, 1), errors::kDistillAxis});
  v.push_back({"distill element count too large: invalid id first", ceLeaves,
               distill({kBig, kBig + 1}, 0, 9, 9), errors::kInvalidNodeId});
  v.push_back({"distill outer too large before invalid id", ceLeaves,
               distill({k2to32, 1}, 1, 9, 9), errors::kTooLarge});
  v.push_back({"distill invalid teacher", ceLeaves, distill(s23, 0, 0, 9), errors::kInvalidNodeId});
  v.push_back({"distill teacher mismatch", ceLeaves, distill(s23, 0, 0, 2), errors::kShapeMismatch});
  return v;
}

void checkErrors(const KernelTable& kernels) {
  for (const ErrorCase& ec : errorCases()) {
    INFO(ec.name);
    auto reference = conformance::makeReferenceTapeDouble();
    auto device = conformance::makeDeviceTape(kernels);
    for (const Leaf& l : ec.leaves) {
      REQUIRE(reference->leaf(l.value, l.requiresGrad));
      REQUIRE(device->leaf(l.value, l.requiresGrad));
    }
    const std::size_t before = device->size();
    auto r = ec.call(*reference);
    auto d = ec.call(*device);
    REQUIRE_FALSE(r.ok());
    CHECK(r.message() == ec.expected);
    REQUIRE_FALSE(d.ok());
    CHECK(d.message() == r.message());
    CHECK(device->size() == before);
    CHECK(reference->size() == before);
  }
}

void checkBackwardErrors(const KernelTable& kernels) {
  auto reference = conformance::makeReferenceTapeDouble();
  auto device = conformance::makeDeviceTape(kernels);
  for (conformance::AnyTape* t : {reference.get(), device.get()}) {
    REQUIRE(t->leaf(tensor({2, 3}, {1, 2, 3, 4, 5, 6}), true));
    REQUIRE(t->softmaxLast({2, 3}, 0));
  }
  struct Bad {
    const char* name;
    NodeId out;
    TensorData seed;
    const char* expected;
  };
  const std::vector<Bad> bad = {
      {"invalid output id", 2, tensor({2, 3}, std::vector<double>(6, 1)), errors::kInvalidOutputId},
      {"seed shape mismatch", 1, tensor({3, 2}, std::vector<double>(6, 1)), errors::kSeedMismatch},
      {"seed of a scalar for a tensor", 1, tensor({}, {1}), errors::kSeedMismatch},
  };
  for (const Bad& b : bad) {
    INFO(b.name);
    auto r = reference->backward(b.out, b.seed);
    auto d = device->backward(b.out, b.seed);
    REQUIRE_FALSE(r.ok());
    CHECK(r.message() == b.expected);
    REQUIRE_FALSE(d.ok());
    CHECK(d.message() == r.message());
    CHECK(device->size() == 2);
  }
  // A seed whose length differs from its shape: TorchLean's buffer validation message.
  {
    const TensorData shortSeed{{2, 3}, {1, 1}};
    auto r = reference->backward(1, shortSeed);
    auto d = device->backward(1, shortSeed);
    REQUIRE_FALSE(r.ok());
    CHECK(r.message() == "autograd: CUDA buffer size mismatch (shape elements=6, native elements=2)");
    REQUIRE_FALSE(d.ok());
    CHECK(d.message() == r.message());
  }
  // A leaf whose value does not fit its shape: the tape's own message, the same on both.
  const TensorData wrong{{2, 2}, {1, 2, 3}};
  auto r = reference->leaf(wrong, true);
  auto d = device->leaf(wrong, true);
  REQUIRE_FALSE(r.ok());
  REQUIRE_FALSE(d.ok());
  CHECK(d.message() == r.message());
  CHECK(device->size() == 2);
  // An empty leaf with a dimension of 2^33 is accepted, and then no backward can allocate its
  // gradient: too large on both tapes.
  const TensorData huge{{0, Dim{1} << 33}, {}};
  for (conformance::AnyTape* t : {reference.get(), device.get()}) {
    REQUIRE(t->leaf(huge, false));
    auto g = t->backward(1, tensor({2, 3}, std::vector<double>(6, 1)));
    REQUIRE_FALSE(g.ok());
    CHECK(g.message() == errors::kTooLarge);
  }
}

}  // namespace

TEST_CASE("Device tape errors are the reference tape's and leave the tape unchanged (aten)",
          "[errors]") {
  checkErrors(atenCpu());
  checkBackwardErrors(atenCpu());
}

TEST_CASE("Device tape errors are the reference tape's and leave the tape unchanged "
          "(host plugin)",
          "[errors]") {
  checkErrors(hostReference());
  checkBackwardErrors(hostReference());
}
