// device::KernelBackend: the Backend (tapecheck/backend.h) of the device tape. Buffers are flat,
// contiguous float32 at::Tensors on the CPU or on the current CUDA device, and every native
// primitive runs through the kernel table under test (built-in `aten`, built-in `cuda`, or a
// plugin): the backend allocates the outputs, calls the kernel on the raw pointers and turns a
// nonzero return, a LibTorch error or a CUDA error into a Result error naming the kernel entry.
// Tape<KernelBackend> (tape.h) owns everything else: validation, empty and scalar cases, backward.
//
// Conventions (see device/README.md):
//   - stream: kernels with memory == 1 get `nullptr`, the legacy default stream, which is the
//     stream LibTorch uses unless a caller installs another one (tapecheck never does). After
//     each such call the backend synchronizes the device, so an asynchronous CUDA error is
//     reported by the call that caused it.
//   - outputs are pre-filled with NaN before the kernel runs, so an element a kernel forgets to
//     write is a deterministic NaN, never stale memory that might happen to be right. Each lies
//     between guard regions (src/output_guards.h): a kernel that writes outside its outputs is
//     an error even when nothing crashes.
//   - an entry point the table does not provide (null) is an error naming it; the conformance
//     run does not call the operations that need it (kernel_entries.h).
//   - a kernel that returns nonzero, throws or writes outside its outputs is also recorded as
//     the backend's fault(), so a conformance run can tell it from an error of the spec.
//   - epsilon arrives as binary64 and is rounded to binary32 here, once, before the kernel call.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "tapecheck/backend.h"
#include "tapecheck/device/kernel_fault.h"
#include "tapecheck/device/kernel_table.h"
#include "tapecheck/result.h"
#include "tapecheck/shape.h"
#include "tapecheck/tape.h"

namespace tapecheck::device {

class KernelBackend {
 public:
  using Buffer = at::Tensor;  // 1-D, contiguous, float32, on the table's device

  // `kernels` must come from loadKernelTable (a validated table); its library stays loaded as
  // long as a copy of this backend exists.
  explicit KernelBackend(KernelTable kernels);

  const KernelTable& kernels() const { return kernels_; }

  Dim count(const Buffer& b) const;
  Result<Buffer> copy(const Buffer& b) const;
  Result<Buffer> filled(Dim n, double value) const;
  Result<Buffer> add(const Buffer& a, const Buffer& b) const;
  Result<Buffer> fromHost(const std::vector<double>& values) const;  // rounded to binary32
  // Rounded to binary64 (exact). toHost cannot return an error: if the copy fails (a CUDA error)
  // the result is all NaN, which no comparison accepts for a finite expected value.
  std::vector<double> toHost(const Buffer& b) const;
  std::string description() const;  // "device-<name>-<version>@<cpu|cuda>"
  // The first kernel fault since this backend was made, shared by its copies (the tape's).
  std::optional<KernelFault> fault() const;

  Result<Buffer> softmaxFwd(RowFold f, const Buffer& x) const;
  Result<Buffer> softmaxBwd(RowFold f, const Buffer& y, const Buffer& dy) const;
  Result<Buffer> logSoftmaxFwd(RowFold f, const Buffer& x) const;
  Result<Buffer> logSoftmaxBwd(RowFold f, const Buffer& y, const Buffer& dy) const;
  Result<Buffer> topkMask(RowFold f, std::uint32_t k, const Buffer& x) const;
  Result<NormForward<Buffer>> layerNormFwd(RowFold f, double eps, const Buffer& x,
                                           const Buffer& gamma, const Buffer& beta) const;
  Result<NormBackward<Buffer>> layerNormBwd(RowFold f, const Buffer& dy, const Buffer& xhat,
                                            const Buffer& invStd, const Buffer& gamma) const;
  Result<NormForward<Buffer>> batchNormFwd(RowFold f, double eps, const Buffer& x,
                                           const Buffer& gamma, const Buffer& beta) const;
  Result<NormBackward<Buffer>> batchNormBwd(RowFold f, const Buffer& dy, const Buffer& xhat,
                                            const Buffer& invStd, const Buffer& gamma) const;
  Result<CrossEntropyForward<Buffer>> crossEntropyFwd(AxisFold f, bool mean,
                                                      const Buffer& logits,
                                                      const Buffer& target) const;
  Result<CrossEntropyBackward<Buffer>> crossEntropyBwd(AxisFold f, bool mean,
                                                       const Buffer& dloss, const Buffer& logp,
                                                       const Buffer& target) const;
  // distill's teacher: ATen's softmax along the axis (DESIGN.md section 3), not a kernel.
  Result<Buffer> softmaxAxis(AxisFold f, const Buffer& x) const;

 private:
  KernelTable kernels_;
  std::shared_ptr<std::optional<KernelFault>> fault_;
};

using DeviceTape = Tape<KernelBackend>;

}  // namespace tapecheck::device

namespace tapecheck {
// Compiled once, in device/src/kernel_backend.cpp.
extern template class Tape<device::KernelBackend>;
}  // namespace tapecheck
