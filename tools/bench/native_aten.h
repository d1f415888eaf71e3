// PyTorch's own CUDA operators for each benchmarked entry point, called directly (no tapecheck
// semantics, no fix-ups): the "ATen" a user would otherwise run, so that "ours vs ATen" can be
// quoted against the real thing as well as against the `aten` kernel table, which wraps these
// operators with the extra work docs/spec.md's semantics need (NaN order in top-k, all-NaN rows, the
// saved xhat) and is therefore slower than ATen itself.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "ops.h"

namespace tapecheck::bench {

// What one ATen operator computes for the op, and how to run it once on `buffers` (prepared
// here: saved statistics a backward needs are computed before timing). nullopt when ATen has no
// single operator for the op (cross_entropy_bwd: autograd composes it from several).
struct NativeCall {
  std::string what;               // e.g. "at::_softmax"
  std::function<void()> launch;   // enqueues the operator on LibTorch's current stream
};
std::optional<NativeCall> prepareNativeAten(Op op, const Shape& shape,
                                            const DeviceBuffers& buffers);

}  // namespace tapecheck::bench
