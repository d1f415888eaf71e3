#include "tapecheck/conformance/case_params.h"

#include <cstdio>

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
