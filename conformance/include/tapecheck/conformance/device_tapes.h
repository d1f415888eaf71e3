// The device tape (LibTorch buffers + a kernel table) behind the AnyTape interface.
#pragma once

#include <memory>

#include "tapecheck/conformance/any_tape.h"
#include "tapecheck/device/kernel_table.h"

namespace tapecheck::conformance {

std::unique_ptr<AnyTape> makeDeviceTape(const device::KernelTable& kernels);

}  // namespace tapecheck::conformance
