// The exact error strings of docs/spec.md. Both tapes report these and the golden vectors expect them
// byte for byte, so they live in one place.
#pragma once

#include <cstdint>
#include <string>

namespace tapecheck::errors {

inline constexpr const char* kTooLarge = "autograd: tensor too large (numel does not fit in UInt32)";
inline constexpr const char* kInvalidNodeId = "autograd: invalid node id";
inline constexpr const char* kShapeMismatch = "autograd: shape mismatch";
inline constexpr const char* kInvalidOutputId = "autograd: invalid output id";
inline constexpr const char* kSeedMismatch = "autograd: seed gradient shape mismatch for output";
inline constexpr const char* kContributionShape =
    "autograd: gradient contribution has wrong shape for parent";
inline constexpr const char* kLayerNormDims =
    "autograd: layer_norm: seqLen and embedDim must be positive";
inline constexpr const char* kBatchNormShape = "autograd: batch_norm: shape must be well-formed";
inline constexpr const char* kCrossEntropyAxis = "autograd: cross_entropy: axis out of bounds";
// TorchLean names no string for distill's axis check; this mirrors cross_entropy's wording
// (docs/spec.md#deliberate-choices).
inline constexpr const char* kDistillAxis = "autograd: distill: axis out of bounds";

// A buffer whose length differs from its shape's element count: TorchLean's AnyBuffer.validate
// (docs/spec.md#lookup, docs/spec.md#backward).
inline std::string bufferSizeMismatch(std::uint64_t expected, std::uint64_t actual) {
  return "autograd: CUDA buffer size mismatch (shape elements=" + std::to_string(expected) +
         ", native elements=" + std::to_string(actual) + ")";
}

}  // namespace tapecheck::errors
