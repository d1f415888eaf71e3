// Chained tape programs: an op feeding another op and a loss, built on AnyTape, so gradients
// flow through several pullbacks and add up where a node feeds two consumers. Each is described
// by an OpInfo like an operation (its call, case builder, floors and budget), judged normwise.
#include "case_support.h"
#include "floor_support.h"
#include "ops.h"

namespace tapecheck::conformance::ops {
namespace {

// ---- the calls ------------------------------------------------------------------------------

// x -> p = softmaxLast(x); loss = crossEntropy(logits = x, target = p): x receives gradient from
// two nodes (directly as logits, and through softmax as the target), which must add up.
Result<NodeId> callSoftmaxCrossEntropy(AnyTape& t, const TestCase& c) {
  const Shape& s = *c.attrs.s;
  auto p = t.softmaxLast(s, 0);
  if (!p) return p;
  return t.crossEntropy(s, *c.attrs.axis, 0, p.value(), c.attrs.mean.value_or(true));
}

// h = layerNorm(x); z = logSoftmaxLast(h); loss = distill(student = z, teacher): three ops
// chained; the teacher leaf requires grad but, a constant of distill, gets none.
Result<NodeId> callLayerNormLogSoftmaxDistill(AnyTape& t, const TestCase& c) {
  const std::uint64_t rows = *c.attrs.seqLen, cols = *c.attrs.embedDim;
  auto h = t.layerNorm(rows, cols, 0, 1, 2, c.attrs.epsilon.value_or(kNormalizationEpsilon));
  if (!h) return h;
  const Shape s{rows, cols};
  auto z = t.logSoftmaxLast(s, h.value());
  if (!z) return z;
  return t.distill(s, 1, z.value(), c.call.at("teacher"));
}

// y = batchNorm(x); p = softmaxLast(y); loss = crossEntropy(axis 0, logits = y, target = p): the
// gradient of the node y accumulates from two consumers before batchNorm's pullback runs. (Along
// the channels: beta shifts a whole channel, to which a softmax within the channel is blind.)
Result<NodeId> callBatchNormSoftmaxCrossEntropy(AnyTape& t, const TestCase& c) {
  const Shape& spatial = *c.attrs.spatial;
  Shape s{*c.attrs.channels};
  s.insert(s.end(), spatial.begin(), spatial.end());
  auto y = t.batchNorm(*c.attrs.channels, spatial, 0, 1, 2,
                       c.attrs.epsilon.value_or(kNormalizationEpsilon));
  if (!y) return y;
  auto p = t.softmaxLast(s, y.value());
  if (!p) return p;
  return t.crossEntropy(s, 0, y.value(), p.value(), c.attrs.mean.value_or(true));
}

// ---- the cases ------------------------------------------------------------------------------

TestCase softmaxCrossEntropyCase(const CaseParams& p) {
  TestCase c;
  c.op = "softmaxLast-crossEntropy";
  values::Rng x(values::mix(p.valueSeed, kMain));
  c.leaves.push_back(leaf(p.shape, values::fill(p.fill, lastAxisFold(p.shape), x), true));
  c.call = {{"x", 0}};
  c.attrs.s = p.shape;
  c.attrs.axis = p.axis;
  c.attrs.mean = p.mean;
  c.upstream = upstream({}, p.valueSeed);
  return c;
}

TestCase layerNormLogSoftmaxDistillCase(const CaseParams& drawn) {
  // Rows of two standardize to xhat = +-sqrt(var / (var + eps)) whatever x is, and the gradient
  // through them cancels to ~eps / var of its terms: not a test of accumulation. Three at least.
  CaseParams p = drawn;
  p.shape.at(1) = std::max<Dim>(p.shape.at(1), 3);
  TestCase c = findOp("layerNorm")->makeCase(p);
  c.op = "layerNorm-logSoftmaxLast-distill";
  for (Leaf& l : c.leaves) l.requiresGrad = true;
  // The teacher's logits: a leaf of its own that requires grad (and must get none).
  values::Rng t(values::mix(p.valueSeed, kTeacher));
  const AxisFold rows{static_cast<std::uint32_t>(p.shape.at(0)),
                      static_cast<std::uint32_t>(p.shape.at(1)), 1};
  c.leaves.push_back(leaf(p.shape, values::fill(Fill::Normal, rows, t), true));
  c.call["teacher"] = 3;
  c.upstream = upstream({}, p.valueSeed);
  return c;
}

TestCase batchNormSoftmaxCrossEntropyCase(const CaseParams& drawn) {
  // The loss runs along the channels: with one channel it is identically 0. Two at least. And
  // channels of two values cancel like layerNorm's rows of two (above): three at least.
  CaseParams p = drawn;
  p.shape.at(0) = std::max<Dim>(p.shape.at(0), 2);
  if (p.shape.size() > 1) p.shape.back() = std::max<Dim>(p.shape.back(), 3);
  TestCase c = findOp("batchNorm")->makeCase(p);
  c.op = "batchNorm-softmaxLast-crossEntropy";
  for (Leaf& l : c.leaves) l.requiresGrad = true;
  c.attrs.mean = p.mean;
  c.upstream = upstream({}, p.valueSeed);
  return c;
}

// ---- how they are judged ----------------------------------------------------------------------

// Normwise: the largest finite |expected| of each output (at least 1 for the loss).
Floors normwiseFloors(const TestCase& c, const Outcome& e) {
  Floors f = emptyFloors(e);
  if (e.error) return f;
  auto scale = [](const std::vector<double>& v) {
    double m = 0;
    for (double x : v) m = std::max(m, finiteAbs(x));
    return m;
  };
  // The programs end in a loss: near 0 it is known to ulps of its log-probabilities (size 1).
  std::fill(f[0].begin(), f[0].end(), std::max(scale(e.value.values), 1.0));
  // The gradients as one vector J^T u: a leaf whose gradient cancels to almost nothing (beta
  // under a loss along the channels) is judged at the scale of the whole backward pass.
  // Near a stationary point (the entropy of a near-uniform row) the gradient cancels to much
  // less than its terms, p * |log p| per unit of upstream, and is exactly 0 at it: a binary32
  // chain leaves rounding noise of the terms' size. The floor is at least 2^-8 of the upstream
  // (programs look for gradients that are lost or not accumulated, off by O(1)).
  double g = c.upstream ? scale(c.upstream->values) / 256 : 0.0;
  for (std::size_t i = 0; i < e.grads.size() && i < c.leaves.size(); ++i)
    if (c.leaves[i].requiresGrad) g = std::max(g, scale(e.grads[i].values));
  for (std::size_t i = 0; i < e.grads.size() && i + 1 < f.size(); ++i)
    if (i < c.leaves.size() && c.leaves[i].requiresGrad)
      std::fill(f[i + 1].begin(), f[i + 1].end(), g);
  return f;
}

constexpr OpBudget kBudget{
    {64, 2,
     "a chain of two or three ops ending in a loss: about the sum of their forward budgets, "
     "judged against max(|loss|, 1) -- a loss near 0 (a confident softmax's entropy) is known "
     "only to ulps of the log-probabilities, of size 1 -- because the inner op's error is an "
     "input perturbation of the outer one"},
    {1024, 16,
     "gradients through the chain, added up where a node feeds two consumers, judged normwise "
     "per leaf: a crossEntropy whose target is softmax(x) feeds softmax's backward with -log p, "
     "of size log(n), whose row dot product cancels to O(1) -- a loss of log(n) * sqrt(n) ulps "
     "inherent in binary32; near a stationary point the gradient cancels below its floor "
     "|dy|/256 while its terms (p, exp(log p), p log p) are of size |dy|, so a few roundings of "
     "those -- an exp within 2 ulps, a log, products -- leave 4 ulps of |dy|: 1024 of the "
     "floor; a gradient that is overwritten instead of accumulated is off by O(1), millions of "
     "ulps"}};

// What every program shares; the caller fills in the rest.
OpInfo program(std::string name, std::vector<std::string> uses) {
  OpInfo op;
  op.name = std::move(name);
  op.nodeName = uses.back();
  op.uses = std::move(uses);
  op.program = true;
  op.hardFlags = {"GradientAccumulation"};
  op.budget = &kBudget;
  op.hasBackward = true;
  op.floors = normwiseFloors;
  return op;
}

}  // namespace

OpInfo softmaxCrossEntropy() {
  OpInfo op = program("softmaxLast-crossEntropy", {"softmaxLast", "crossEntropy"});
  op.call = callSoftmaxCrossEntropy;
  // Its arguments as its cases give them (a written case file names the same ones).
  op.tensorArgs = {"x"};
  op.attrNames = {"s", "axis"};
  op.optionalAttrNames = {"mean"};
  op.family = ShapeFamily::AxisSlices;
  op.fills = {Fill::Normal, Fill::NearExpOverflow, Fill::IntegerTies};
  op.makeCase = softmaxCrossEntropyCase;
  return op;
}

OpInfo layerNormLogSoftmaxDistill() {
  OpInfo op = program("layerNorm-logSoftmaxLast-distill",
                      {"layerNorm", "logSoftmaxLast", "distill"});
  op.call = callLayerNormLogSoftmaxDistill;
  op.tensorArgs = {"x", "gamma", "beta", "teacher"};
  op.attrNames = {"seqLen", "embedDim"};
  op.optionalAttrNames = {"epsilon"};
  op.family = ShapeFamily::SeqEmbed;
  op.fills = {Fill::Normal, Fill::IntegerTies, Fill::EpsDominated};
  op.constantArgs = {"teacher"};  // distill's teacher is a constant (docs/spec.md)
  op.makeCase = layerNormLogSoftmaxDistillCase;
  return op;
}

OpInfo batchNormSoftmaxCrossEntropy() {
  OpInfo op = program("batchNorm-softmaxLast-crossEntropy",
                      {"batchNorm", "softmaxLast", "crossEntropy"});
  op.call = callBatchNormSoftmaxCrossEntropy;
  op.tensorArgs = {"x", "gamma", "beta"};
  op.attrNames = {"channels", "spatial"};
  op.optionalAttrNames = {"epsilon", "mean"};
  op.family = ShapeFamily::ChannelsSpatial;
  op.fills = {Fill::Normal};
  op.makeCase = batchNormSoftmaxCrossEntropyCase;
  return op;
}

}  // namespace tapecheck::conformance::ops
