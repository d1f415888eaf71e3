// The built-in `aten` kernel table (internal to the device library).
#pragma once

#include <string>

#include "tapecheck/device/kernel_table.h"
#include "tapecheck/kernels_v1.h"

namespace tapecheck::device::detail {

// memory 0 for Cpu, memory 1 for Cuda; both live for the whole process.
const tapecheck_kernels_v1* atenKernels(DeviceKind device);

// The message of the last failure of an `aten` kernel entry on this thread (the ABI returns only
// an int), so that the backend can say why the entry returned nonzero.
const std::string& atenLastError();

}  // namespace tapecheck::device::detail
