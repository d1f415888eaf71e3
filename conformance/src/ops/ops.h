// The entry of every operation and chained program, one function each, defined in the file of
// the same name (softmax_last.cpp, ..., programs.cpp). registry.cpp lists them; nothing else
// calls these.
#pragma once

#include "tapecheck/conformance/op_registry.h"

namespace tapecheck::conformance::ops {

// The docs/spec.md operations.
OpInfo softmaxLast();
OpInfo logSoftmaxLast();
OpInfo topKMask();
OpInfo layerNorm();
OpInfo batchNorm();
OpInfo crossEntropy();
OpInfo distill();

// Chained programs (programs.cpp).
OpInfo softmaxCrossEntropy();
OpInfo layerNormLogSoftmaxDistill();
OpInfo batchNormSoftmaxCrossEntropy();

}  // namespace tapecheck::conformance::ops
