#include "case_support.h"

namespace tapecheck::conformance {

TestCase buildCase(const OpInfo& op, const CaseParams& p) {
  TestCase c = op.makeCase(p);
  ops::applyInvalid(p, op.hasBackward, c);
  return c;
}

}  // namespace tapecheck::conformance

namespace tapecheck::conformance::ops {

using values::Rng;

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

const std::vector<Fill>& softmaxFamilyFills() {
  static const std::vector<Fill> fills = {Fill::NearExpOverflow, Fill::Normal,
                                          Fill::VeryNegative,    Fill::MeanShifted,
                                          Fill::NonFinite,       Fill::IntegerTies,
                                          Fill::AllEqual};
  return fills;
}

const std::vector<std::string>& softmaxFamilyHardFlags() {
  static const std::vector<std::string> flags = {
      "NearExpOverflow", "VeryNegative", "MeanShifted", "NonFinite", "AllEqual",
      "WarpEdge",        "LongRow",      "Empty",       "Scalar"};
  return flags;
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

void applyInvalid(const CaseParams& p, bool hasBackward, TestCase& c) {
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
}

}  // namespace tapecheck::conformance::ops
