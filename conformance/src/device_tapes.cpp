#include "tapecheck/conformance/device_tapes.h"

#include "remote_tape.h"
#include "tapecheck/device/kernel_backend.h"

namespace tapecheck::conformance {

using DeviceTapeAdapter = TapeAdapter<device::KernelBackend>;

std::unique_ptr<AnyTape> makeDeviceTape(const device::KernelTable& kernels) {
  return std::make_unique<DeviceTapeAdapter>(device::KernelBackend(kernels));
}

std::optional<device::KernelFault> kernelFaultOf(const AnyTape& tape) {
  if (const auto* local = dynamic_cast<const DeviceTapeAdapter*>(&tape))
    return local->tape().backend().fault();
  if (const auto* remote = dynamic_cast<const RemoteTape*>(&tape)) return remote->fault();
  return std::nullopt;
}

}  // namespace tapecheck::conformance
