// Guard regions around kernel outputs. Each output buffer is allocated with kGuardFloats floats
// on either side, filled with a canary bit pattern; the kernel gets the interior, pre-filled with
// NaN as before. After the call a guard that changed means the kernel wrote outside the extent it
// was given -- found even when the write crashed nothing. Writes farther out than the guards go
// unseen here (in a worker process they usually crash it, which is reported instead).
//
// Host memory is read and written through pointers; CUDA memory through ATen operations on the
// guard slices, all guards of a call copied to the host in one transfer.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

namespace tapecheck::device::detail {

// 64 floats = 256 bytes: the interior keeps the 256-byte alignment of a CUDA allocation (and the
// 64-byte one of a host allocation), so vectorized kernels see the alignment they would without
// guards.
inline constexpr std::int64_t kGuardFloats = 64;
// A signalling NaN with a payload no arithmetic produces: a kernel storing it by chance is not a
// concern.
inline constexpr std::uint32_t kCanaryBits = 0x7FA5A5A5u;

class GuardedOutputs {
 public:
  // A new output of n floats shaped like `like` (dtype and device), pre-filled with NaN, guarded.
  at::Tensor add(const char* name, std::int64_t n, const at::Tensor& like);

  // The first output whose guards changed, in the order the outputs were added, as the words
  // after the entry point's name: "wrote past its output y (3 floats after the end)".
  std::optional<std::string> violation() const;

 private:
  struct Output {
    const char* name;
    at::Tensor whole;  // guard, interior, guard
    std::int64_t n;
  };
  std::vector<Output> outputs_;
};

}  // namespace tapecheck::device::detail
