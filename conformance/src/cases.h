// How each operation's (and program's) TestCase is built from drawn CaseParams, and the floor
// rules the judge applies to its outputs. Private to the conformance library: the registry
// (op_registry.cpp) is the one place that wires these to the operations.
#pragma once

#include "tapecheck/conformance/op_registry.h"

namespace tapecheck::conformance::cases {

TestCase softmaxLast(const CaseParams& p);
TestCase logSoftmaxLast(const CaseParams& p);
TestCase topKMask(const CaseParams& p);
TestCase layerNorm(const CaseParams& p);
TestCase batchNorm(const CaseParams& p);
TestCase crossEntropy(const CaseParams& p);
TestCase distill(const CaseParams& p);

// Chained programs (programs.cpp builds the chain on the tape).
TestCase softmaxCrossEntropy(const CaseParams& p);
TestCase layerNormLogSoftmaxDistill(const CaseParams& p);
TestCase batchNormSoftmaxCrossEntropy(const CaseParams& p);

// Applies p.invalid to a well-formed case (mismatched shape, bad id, ...).
void applyInvalid(const CaseParams& p, ShapeFamily family, bool hasBackward, TestCase& c);

}  // namespace tapecheck::conformance::cases

namespace tapecheck::conformance::floors {

Floors softmaxLast(const TestCase& c, const Outcome& e);
Floors logSoftmaxLast(const TestCase& c, const Outcome& e);
Floors topKMask(const TestCase& c, const Outcome& e);
Floors layerNorm(const TestCase& c, const Outcome& e);
Floors batchNorm(const TestCase& c, const Outcome& e);
Floors crossEntropy(const TestCase& c, const Outcome& e);
Floors distill(const TestCase& c, const Outcome& e);
// Programs: normwise, the largest finite |expected| of each output (at least 1 for the loss).
Floors normwise(const TestCase& c, const Outcome& e);

}  // namespace tapecheck::conformance::floors

namespace tapecheck::conformance::programs {

Result<NodeId> softmaxCrossEntropy(AnyTape& t, const TestCase& c);
Result<NodeId> layerNormLogSoftmaxDistill(AnyTape& t, const TestCase& c);
Result<NodeId> batchNormSoftmaxCrossEntropy(AnyTape& t, const TestCase& c);

}  // namespace tapecheck::conformance::programs
