// Isolating the pullbacks of a kernel table: the same table with its forward entries replaced by a
// reference forward, so that each backward entry reads the saved outputs (y, xhat, invStd, logp)
// an exact forward gives instead of the kernel's own. The conformance runner judges a pullback
// on this table too, and a forward bug is then reported once, as a forward failure, not again
// through every pullback that reads the wrong output.
//
// The reference forward is docs/spec.md's formula in binary64 through ATen, on the table's own memory
// kind (host tensors for memory 0, CUDA tensors for memory 1), rounded once to binary32: for a
// host table the ATen CPU operations, for a CUDA table the ATen CUDA ones. topk_mask has no
// pullback and is left as it is.
#pragma once

#include "tapecheck/device/kernel_table.h"

namespace tapecheck::device {

// `underTest` must come from loadKernelTable. The result keeps the table's name, version,
// memory kind and backward entries (and its library loaded); every forward entry the table
// provides is the reference one. A null entry stays null.
KernelTable withReferenceForward(const KernelTable& underTest);

}  // namespace tapecheck::device
