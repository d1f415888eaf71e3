// The pieces every op's floor rule is made of (the rules themselves are in each op's file).
// A floor is the scale against which an output element's error is measured (ulp.h): the
// magnitude of the terms the exact formula combines for that element, so that a correct binary32
// kernel stays within a few units of it whatever cancels, while values that cancelled to nearly
// nothing are not judged against their own tiny size. Everything is computed in binary64 from
// the case's inputs and the expected outcome; non-finite terms are left out (those elements are
// judged by kind).
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include "../values.h"
#include "tapecheck/conformance/judge.h"
#include "tapecheck/reference/softmax.h"

namespace tapecheck::conformance::ops {

using Vec = reference::Vec<double>;

inline double finiteAbs(double v) { return std::isfinite(v) ? std::fabs(v) : 0.0; }

// The values of the leaf passed as tensor argument `name`.
const std::vector<double>& leafOf(const TestCase& c, const char* name);

// The floors of the gradient of tensor argument `arg`: those of its leaf (whatever the leaf's
// position), or nullptr when no gradient reaches it (no upstream, or the leaf does not require
// grad: it must then get exactly zero). Rules that write a leaf twice (the same leaf as logits and
// target) keep the larger floor.
std::vector<double>* gradFloors(Floors& f, const TestCase& c, const char* arg);

inline void raise(std::vector<double>& f, std::size_t i, double v) {
  if (i < f.size()) f[i] = std::max(f[i], v);
}

// The magnitude v >= 0, a binary32 intermediate, carries error relative to: v itself in the
// normal range, 2^-126 below it (a subnormal is known to 2^-150 whatever its size). A factor
// that multiplies it afterwards (sum(dy), invStd) multiplies that error too, so floors built on
// intermediates use this; judge.h's elementFloor does the same for the outputs themselves.
inline double binary32Scale(double v) { return std::max(v, kBinary32MinNormal); }

Vec toVec(const std::vector<double>& v);

// One floor vector per compared output, sized like the expected outcome, zero by default (a
// leaf that does not require grad must get exactly zero).
Floors emptyFloors(const Outcome& e);

// The rows of a last-axis op's tensor.
AxisFold rowsOf(const Shape& s);

double maxAbsAt(const std::vector<double>& v, const std::vector<std::size_t>& idx);
double sumAbsAt(const std::vector<double>& v, const std::vector<std::size_t>& idx);

// Whether the expected outcome has what a rule reads: a value, and a gradient per leaf when the
// case has an upstream.
bool sizesMatch(const Floors& f, const TestCase& c, const Outcome& e);

// layerNorm's and batchNorm's rule over the rows (channels) of `fold`; `perColumn` says whether
// gamma/beta index the column (layerNorm) or the row (batchNorm).
Floors normalizationFloors(const TestCase& c, const Outcome& e, const AxisFold& fold,
                           bool perColumn);

// The weighted cross-entropy rule shared by crossEntropy and distill: `target` are the weights
// (distill: softmax of the teacher), `logits` the logits.
void crossEntropyFloors(const TestCase& c, const std::vector<double>& logits,
                        const std::vector<double>& target, bool mean, Floors& f,
                        std::vector<double>* dlogits, std::vector<double>* dtarget);

}  // namespace tapecheck::conformance::ops
