// The exact error strings of SPEC.md. Both tapes report these and the golden vectors expect them
// byte for byte, so they live in one place.
#pragma once

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
// SPEC.md names no string for distill's axis check; we mirror cross_entropy's wording
// (docs/semantics-choices.md).
inline constexpr const char* kDistillAxis = "autograd: distill: axis out of bounds";

}  // namespace tapecheck::errors
