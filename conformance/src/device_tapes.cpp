#include "tapecheck/conformance/device_tapes.h"

#include "tapecheck/device/kernel_backend.h"

namespace tapecheck::conformance {

std::unique_ptr<AnyTape> makeDeviceTape(const device::KernelTable& kernels) {
  return std::make_unique<TapeAdapter<device::KernelBackend>>(device::KernelBackend(kernels));
}

}  // namespace tapecheck::conformance
