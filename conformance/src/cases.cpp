#include "cases.h"

#include <algorithm>
#include <cstdio>

#include "values.h"

namespace tapecheck::conformance {

const char* fillName(Fill f) {
  switch (f) {
    case Fill::Normal: return "Normal";
    case Fill::MeanShifted: return "MeanShifted";
    case Fill::NearExpOverflow: return "NearExpOverflow";
    case Fill::VeryNegative: return "VeryNegative";
    case Fill::IntegerTies: return "IntegerTies";
    case Fill::NonFinite: return "NonFinite";
    case Fill::AllEqual: return "AllEqual";
    case Fill::EpsDominated: return "EpsDominated";
    case Fill::ConstantChannels: return "ConstantChannels";
  }
  return "?";
}

const char* targetFillName(TargetFill t) {
  switch (t) {
    case TargetFill::Weights: return "Weights";
    case TargetFill::OneHot: return "OneHot";
    case TargetFill::Sparse: return "Sparse";
    case TargetFill::Distribution: return "Distribution";
  }
  return "?";
}

const char* invalidName(Invalid i) {
  switch (i) {
    case Invalid::None: return "none";
    case Invalid::InvalidId: return "invalid-id";
    case Invalid::ShapeMismatch: return "shape-mismatch";
    case Invalid::AxisOutOfBounds: return "axis-out-of-bounds";
    case Invalid::BadDims: return "bad-dims";
    case Invalid::SeedMismatch: return "seed-mismatch";
  }
  return "?";
}

namespace {
const char* kName(KChoice k) {
  switch (k) {
    case KChoice::One: return "one";
    case KChoice::Small: return "small";
    case KChoice::Half: return "half";
    case KChoice::AllCols: return "cols";
    case KChoice::Zero: return "zero";
    case KChoice::MoreThanCols: return "more-than-cols";
  }
  return "?";
}
}  // namespace

std::string describe(const CaseParams& p) {
  char eps[32];
  std::snprintf(eps, sizeof eps, "%g", p.epsilon);
  std::string out = toString(p.shape) + " fill=" + fillName(p.fill) + " axis=" +
                    std::to_string(p.axis) + " k=" + kName(p.k) + " target=" +
                    targetFillName(p.target) + " eps=" + eps + " mean=" +
                    (p.mean ? "true" : "false") + " noGrad=" + std::to_string(p.noGrad);
  if (p.invalid != Invalid::None) out += std::string(" invalid=") + invalidName(p.invalid);
  return out;
}

}  // namespace tapecheck::conformance

namespace tapecheck::conformance::cases {
namespace {

using values::Rng;

enum Salt : std::uint64_t { kMain = 1, kTarget, kGamma, kBeta, kUpstream, kTeacher, kK };

// Slices of the last axis (rank 0: one slice of one; empty: none).
AxisFold lastAxisFold(const Shape& s) {
  if (s.empty()) return {1, 1, 1};
  const Dim n = sizeOf(s);
  if (n == 0) return {0, 0, 1};
  return {static_cast<std::uint32_t>(n / s.back()), static_cast<std::uint32_t>(s.back()), 1};
}

AxisFold axisFold(const Shape& s, std::uint64_t axis) {
  if (sizeOf(s) == 0 || axis >= s.size()) return {0, 0, 1};
  return foldAxis(s, static_cast<std::size_t>(axis));
}

Leaf leaf(Shape shape, std::vector<double> v, bool requiresGrad) {
  return Leaf{TensorData{std::move(shape), std::move(v)}, requiresGrad};
}

bool grads(const CaseParams& p, unsigned leafIndex) { return ((p.noGrad >> leafIndex) & 1u) == 0; }

TensorData upstream(const Shape& s, std::uint64_t seed) {
  Rng rng(values::mix(seed, kUpstream));
  return TensorData{s, values::upstreamValues(static_cast<std::size_t>(sizeOf(s)), rng)};
}

TestCase rowCase(const char* op, const CaseParams& p, bool withUpstream) {
  TestCase c;
  c.op = op;
  Rng rng(values::mix(p.valueSeed, kMain));
  c.leaves.push_back(leaf(p.shape, values::fill(p.fill, lastAxisFold(p.shape), rng), grads(p, 0)));
  c.call = {{"x", 0}};
  c.attrs.s = p.shape;
  if (withUpstream) c.upstream = upstream(p.shape, p.valueSeed);
  return c;
}

// x, gamma, beta of a normalization over rows x cols (gamma/beta of length `affine`).
void normLeaves(TestCase& c, const CaseParams& p, const AxisFold& rows, std::size_t affine) {
  Rng x(values::mix(p.valueSeed, kMain)), g(values::mix(p.valueSeed, kGamma)),
      b(values::mix(p.valueSeed, kBeta));
  c.leaves.push_back(leaf(p.shape, values::fill(p.fill, rows, x), grads(p, 0)));
  c.leaves.push_back(leaf({affine}, values::gammaValues(affine, g), grads(p, 1)));
  c.leaves.push_back(leaf({affine}, values::betaValues(affine, b), grads(p, 2)));
  c.call = {{"x", 0}, {"gamma", 1}, {"beta", 2}};
  c.attrs.epsilon = p.epsilon;
  c.upstream = upstream(p.shape, p.valueSeed);
}

Shape spatialOf(const Shape& s) { return Shape(s.begin() + 1, s.end()); }

}  // namespace

TestCase softmaxLast(const CaseParams& p) { return rowCase("softmaxLast", p, true); }
TestCase logSoftmaxLast(const CaseParams& p) { return rowCase("logSoftmaxLast", p, true); }

TestCase topKMask(const CaseParams& p) {
  TestCase c = rowCase("topKMask", p, false);
  const std::uint64_t cols = p.shape.empty() ? 1 : p.shape.back();
  switch (p.k) {
    case KChoice::One: c.attrs.k = 1; break;
    case KChoice::Small: c.attrs.k = 2 + values::mix(p.valueSeed, kK) % 3; break;
    case KChoice::Half: c.attrs.k = cols / 2 ? cols / 2 : 1; break;
    case KChoice::AllCols: c.attrs.k = cols; break;
    case KChoice::Zero: c.attrs.k = 0; break;
    case KChoice::MoreThanCols: c.attrs.k = cols + 3; break;
  }
  return c;
}

TestCase layerNorm(const CaseParams& p) {
  TestCase c;
  c.op = "layerNorm";
  const Dim rows = p.shape.at(0), cols = p.shape.at(1);
  normLeaves(c, p, {static_cast<std::uint32_t>(rows), static_cast<std::uint32_t>(cols), 1},
             static_cast<std::size_t>(cols));
  c.attrs.seqLen = rows;
  c.attrs.embedDim = cols;
  return c;
}

TestCase batchNorm(const CaseParams& p) {
  TestCase c;
  c.op = "batchNorm";
  const Dim channels = p.shape.at(0);
  const Dim spatial = sizeOf(spatialOf(p.shape));
  normLeaves(c, p,
             {static_cast<std::uint32_t>(channels), static_cast<std::uint32_t>(spatial), 1},
             static_cast<std::size_t>(channels));
  c.attrs.channels = channels;
  c.attrs.spatial = spatialOf(p.shape);
  return c;
}

TestCase crossEntropy(const CaseParams& p) {
  TestCase c;
  c.op = "crossEntropy";
  const AxisFold fold = axisFold(p.shape, p.axis);
  Rng x(values::mix(p.valueSeed, kMain)), t(values::mix(p.valueSeed, kTarget));
  c.leaves.push_back(leaf(p.shape, values::fill(p.fill, fold, x), grads(p, 0)));
  c.leaves.push_back(leaf(p.shape, values::fillTarget(p.target, fold, t), grads(p, 1)));
  c.call = {{"logits", 0}, {"target", 1}};
  c.attrs.s = p.shape;
  c.attrs.axis = p.axis;
  c.attrs.mean = p.mean;
  c.upstream = upstream({}, p.valueSeed);
  return c;
}

TestCase distill(const CaseParams& p) {
  TestCase c;
  c.op = "distill";
  const AxisFold fold = axisFold(p.shape, p.axis);
  Rng s(values::mix(p.valueSeed, kMain)), t(values::mix(p.valueSeed, kTeacher));
  c.leaves.push_back(leaf(p.shape, values::fill(p.fill, fold, s), grads(p, 0)));
  c.leaves.push_back(leaf(p.shape, values::fill(p.fill, fold, t), grads(p, 1)));
  c.call = {{"student", 0}, {"teacher", 1}};
  c.attrs.s = p.shape;
  c.attrs.axis = p.axis;
  c.upstream = upstream({}, p.valueSeed);
  return c;
}

TestCase softmaxCrossEntropy(const CaseParams& p) {
  TestCase c;
  c.op = "softmaxLast-crossEntropy";
  Rng x(values::mix(p.valueSeed, kMain));
  c.leaves.push_back(leaf(p.shape, values::fill(p.fill, lastAxisFold(p.shape), x), true));
  c.call = {{"x", 0}};
  c.attrs.s = p.shape;
  c.attrs.axis = p.axis;
  c.attrs.mean = p.mean;
  c.upstream = upstream({}, p.valueSeed);
  return c;
}

TestCase layerNormLogSoftmaxDistill(const CaseParams& drawn) {
  // Rows of two standardize to xhat = +-sqrt(var / (var + eps)) whatever x is, and the gradient
  // through them cancels to ~eps / var of its terms: not a test of accumulation. Three at least.
  CaseParams p = drawn;
  p.shape.at(1) = std::max<Dim>(p.shape.at(1), 3);
  TestCase c = layerNorm(p);
  c.op = "layerNorm-logSoftmaxLast-distill";
  for (Leaf& l : c.leaves) l.requiresGrad = true;
  // The teacher's logits: a leaf of its own that requires grad (and must get none).
  Rng t(values::mix(p.valueSeed, kTeacher));
  const AxisFold rows{static_cast<std::uint32_t>(p.shape.at(0)),
                      static_cast<std::uint32_t>(p.shape.at(1)), 1};
  c.leaves.push_back(leaf(p.shape, values::fill(Fill::Normal, rows, t), true));
  c.call["teacher"] = 3;
  c.upstream = upstream({}, p.valueSeed);
  return c;
}

TestCase batchNormSoftmaxCrossEntropy(const CaseParams& drawn) {
  // The loss runs along the channels: with one channel it is identically 0. Two at least. And
  // channels of two values cancel like layerNorm's rows of two (above): three at least.
  CaseParams p = drawn;
  p.shape.at(0) = std::max<Dim>(p.shape.at(0), 2);
  if (p.shape.size() > 1) p.shape.back() = std::max<Dim>(p.shape.back(), 3);
  TestCase c = batchNorm(p);
  c.op = "batchNorm-softmaxLast-crossEntropy";
  for (Leaf& l : c.leaves) l.requiresGrad = true;
  c.attrs.mean = p.mean;
  c.upstream = upstream({}, p.valueSeed);
  return c;
}

void applyInvalid(const CaseParams& p, ShapeFamily family, bool hasBackward, TestCase& c) {
  Invalid kind = p.invalid;
  if (kind == Invalid::AxisOutOfBounds && !c.attrs.axis) kind = Invalid::ShapeMismatch;
  if (kind == Invalid::BadDims && !c.attrs.seqLen && !c.attrs.spatial) kind = Invalid::InvalidId;
  if (kind == Invalid::SeedMismatch && (!hasBackward || !c.upstream)) kind = Invalid::InvalidId;
  switch (kind) {
    case Invalid::None:
      return;
    case Invalid::InvalidId:
      // The last tensor argument points past the tape (lookups go in argument order, so the
      // earlier ones are still checked first).
      for (auto& [name, id] : c.call)
        if (id + 1 == c.leaves.size()) id = c.leaves.size() + 2;
      return;
    case Invalid::ShapeMismatch:
      c.leaves.at(0).value.shape.push_back(1);  // same elements, another shape
      return;
    case Invalid::AxisOutOfBounds:
      c.attrs.axis = c.attrs.s ? c.attrs.s->size() : 0;
      return;
    case Invalid::BadDims:
      if (c.attrs.seqLen) c.attrs.seqLen = 0;
      else c.attrs.spatial->push_back(0);
      return;
    case Invalid::SeedMismatch:
      c.upstream->shape.push_back(1);
      return;
  }
  (void)family;
}

}  // namespace tapecheck::conformance::cases

namespace tapecheck::conformance::programs {

// x -> p = softmaxLast(x); loss = crossEntropy(logits = x, target = p): x receives gradient from
// two nodes (directly as logits, and through softmax as the target), which must add up.
Result<NodeId> softmaxCrossEntropy(AnyTape& t, const TestCase& c) {
  const Shape& s = *c.attrs.s;
  auto p = t.softmaxLast(s, 0);
  if (!p) return p;
  return t.crossEntropy(s, *c.attrs.axis, 0, p.value(), c.attrs.mean.value_or(true));
}

// h = layerNorm(x); z = logSoftmaxLast(h); loss = distill(student = z, teacher): three ops
// chained; the teacher leaf requires grad but, a constant of distill, gets none.
Result<NodeId> layerNormLogSoftmaxDistill(AnyTape& t, const TestCase& c) {
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
Result<NodeId> batchNormSoftmaxCrossEntropy(AnyTape& t, const TestCase& c) {
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

}  // namespace tapecheck::conformance::programs
