// docs/spec.md's standardization of the rows of a [rows, cols] tensor with ATen ops in the
// tensor's own precision (internal to the device library): float32 for the `aten` kernel table,
// binary64 for the reference forward that isolates pullbacks (reference_forward.h). One formula
// for both, so the two cannot drift apart.
#pragma once

#include <cstdint>

#include <ATen/ATen.h>

namespace tapecheck::device::detail {

struct Standardized {
  at::Tensor xhat;    // [rows, cols]
  at::Tensor invStd;  // [rows, 1]
};

// Step by step along dim 1 (docs/spec.md#layer-norm, docs/spec.md#batch-norm):
//   mean = mean(x); c = x - mean
//   varRaw = mean((c - mean(c))^2) for layerNorm (centered twice), mean(c^2) for batchNorm
//   var = max(varRaw, 0); std = sqrt(max(var + eps, 0)); invStd = 1 / std; xhat = c / std
// clamp_min propagates NaN in ATen (checked by the tests), matching Lean's max, where
// max(NaN, 0) = NaN. The square root is the Spec's clamped one: where(d <= 0, 0, d) keeps a
// NaN d and turns a d of -0 or below into +0, so a negative epsilon gives std = 0, not NaN.
// `eps` is the kernel ABI's binary32 epsilon, exactly.
inline Standardized specStandardize(const at::Tensor& x, double eps, bool centerTwice) {
  const std::int64_t dim[] = {1};
  const at::Tensor mean = x.mean(at::IntArrayRef(dim), /*keepdim=*/true);
  const at::Tensor c = x - mean;
  const at::Tensor centered =
      centerTwice ? c - c.mean(at::IntArrayRef(dim), /*keepdim=*/true) : c;
  const at::Tensor varRaw = centered.square().mean(at::IntArrayRef(dim), /*keepdim=*/true);
  const at::Tensor var = varRaw.clamp_min(0.0);
  const at::Tensor d = var + eps;
  const at::Tensor stdev = at::where(d <= 0, at::zeros_like(d), d).sqrt();
  return {c / stdev, stdev.reciprocal()};
}

}  // namespace tapecheck::device::detail
