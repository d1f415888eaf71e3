// The pieces every op's case builder is made of: leaves filled from the case's seed (values.h),
// the upstream gradient, the folds the fills work on, and the row case shared by the last-axis
// ops.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "../values.h"
#include "tapecheck/conformance/op_registry.h"

namespace tapecheck::conformance::ops {

// Each leaf's values come from a stream of their own: mix(valueSeed, salt).
enum Salt : std::uint64_t { kMain = 1, kTarget, kGamma, kBeta, kUpstream, kTeacher, kK };

// Slices of the last axis (rank 0: one slice of one; empty: none).
AxisFold lastAxisFold(const Shape& s);

// Slices along `axis` (none when the tensor is empty or the axis out of range).
AxisFold axisFold(const Shape& s, std::uint64_t axis);

Leaf leaf(Shape shape, std::vector<double> v, bool requiresGrad);

// Whether leaf `leafIndex` requires grad (p.noGrad's bit clear).
bool grads(const CaseParams& p, unsigned leafIndex);

// An upstream gradient of shape s, from the case's seed.
TensorData upstream(const Shape& s, std::uint64_t seed);

// The case of a last-axis op: x of shape p.shape, attribute s, an upstream when asked.
TestCase rowCase(const char* op, const CaseParams& p, bool withUpstream);

// softmaxLast and logSoftmaxLast read the same inputs the same way (a row maximum, exp, a row
// sum), so they draw the same fills and are hard on the same inputs.
const std::vector<Fill>& softmaxFamilyFills();
const std::vector<std::string>& softmaxFamilyHardFlags();

// x, gamma, beta of a normalization over rows x cols (gamma/beta of length `affine`), epsilon
// and the upstream.
void normLeaves(TestCase& c, const CaseParams& p, const AxisFold& rows, std::size_t affine);

Shape spatialOf(const Shape& s);  // batchNorm's spatial shape: s without its first dim

// Applies p.invalid to a well-formed case (mismatched shape, bad id, ...).
void applyInvalid(const CaseParams& p, bool hasBackward, TestCase& c);

}  // namespace tapecheck::conformance::ops
