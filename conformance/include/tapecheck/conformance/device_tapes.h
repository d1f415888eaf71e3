// The device tape (LibTorch buffers + a kernel table) behind the AnyTape interface.
#pragma once

#include <memory>
#include <optional>

#include "tapecheck/conformance/any_tape.h"
#include "tapecheck/device/kernel_fault.h"
#include "tapecheck/device/kernel_table.h"

namespace tapecheck::conformance {

std::unique_ptr<AnyTape> makeDeviceTape(const device::KernelTable& kernels);

// The kernel fault behind the errors of a device tape (made by makeDeviceTape, or a tape of
// isolatedDeviceTapes): the first one since the tape was made. None for every other tape.
std::optional<device::KernelFault> kernelFaultOf(const AnyTape& tape);

}  // namespace tapecheck::conformance
